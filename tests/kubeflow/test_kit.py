"""kubeflow/: the Dockerfile installs what the local install does; the manifests match the
submit script."""
import re

import yaml

from kfp_compiler.compiler import CONTAINER_SETUP_FILE
from pipeline.dag import PREPROCESSING_FN, RUN_FN
from tests.support.paths import REPO as ROOT

KIT = ROOT / "kubeflow"


def test_the_image_installs_the_same_pins_and_every_package():
    dockerfile = (KIT / "Dockerfile").read_text()
    install = (ROOT / "scripts" / "install.sh").read_text()
    # The same three steps as scripts/install.sh, under the same constraints file.
    assert "pip install -c constraints.txt -r requirements.txt" in dockerfile
    pinned = re.search(r"--ignore-requires-python \\\s+(tfx==\S+ ml-pipelines-sdk==\S+)",
                       dockerfile).group(1)
    assert pinned in install.replace("\\\n  ", "")
    for pin in pinned.split():
        assert pin in (ROOT / "constraints.txt").read_text().splitlines()
    # Every package setup.py installs is copied in, and so are the dotted paths TFX runs.
    for package in ("pipeline", "components", "modules"):
        assert f"COPY {package} {package}" in dockerfile
    for dotted in (PREPROCESSING_FN, RUN_FN):
        assert (ROOT / (dotted.rsplit(".", 1)[0].replace(".", "/") + ".py")).is_file()
        # ...and inside a package the image copies, so the compiled spec's path imports there
        assert f"COPY {dotted.split('.')[0]} {dotted.split('.')[0]}" in dockerfile
    assert "TF_USE_LEGACY_KERAS=1" in dockerfile
    assert 'ENTRYPOINT ["/opt/apache/beam/boot"]' in dockerfile
    # The compiled Beam args name setup.py where the image has it.
    workdir = re.search(r"^WORKDIR (\S+)$", dockerfile, re.M).group(1)
    assert CONTAINER_SETUP_FILE == f"{workdir}/setup.py"
    assert re.search(r"^COPY setup\.py .*\./$", dockerfile, re.M)


def _docs(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_manifests_define_the_account_the_submit_script_uses():
    submit = (KIT / "submit.py").read_text()
    account = _docs(KIT / "manifests" / "base" / "service-account.yaml")[0]
    assert account["kind"] == "ServiceAccount"
    assert f'"--service-account", default="{account["metadata"]["name"]}"' in submit
    assert account["metadata"]["annotations"]["iam.gke.io/gcp-service-account"].endswith(
        ".iam.gserviceaccount.com")
    standalone = _docs(KIT / "manifests" / "standalone" / "kustomization.yaml")[0]
    assert f'"--namespace", default="{standalone["namespace"]}"' in submit
    multi = _docs(KIT / "manifests" / "multi-user" / "kustomization.yaml")[0]
    namespace = _docs(KIT / "manifests" / "multi-user" / "namespace.yaml")[0]
    assert namespace["metadata"]["name"] == multi["namespace"]
    for overlay in (standalone, multi):
        assert "../base" in overlay["resources"]


def test_the_pipelines_account_may_submit_tfjobs():
    base = _docs(KIT / "manifests" / "base" / "kustomization.yaml")[0]
    assert "tfjob-rbac.yaml" in base["resources"]
    role, binding = _docs(KIT / "manifests" / "base" / "tfjob-rbac.yaml")
    account = _docs(KIT / "manifests" / "base" / "service-account.yaml")[0]
    assert role["rules"] == [{"apiGroups": ["kubeflow.org"], "resources": ["tfjobs"],
                              "verbs": ["create", "get", "delete"]}]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount",
                                    "name": account["metadata"]["name"]}]
