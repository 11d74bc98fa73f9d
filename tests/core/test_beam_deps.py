"""--setup_file stops TFX packaging itself per Beam component, and DirectRunner never reads it."""
import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.util import assert_that, equal_to
from tfx.utils import dependency_utils

from core.beam_deps import with_setup_file
from settings.config import LOCAL_BEAM_ARGS, PipelineConfig
from core.beam_deps import LOCAL_SETUP_FILE
from pipeline.dag import create_pipeline
from pipeline.planning.data_facts import DataFacts
from pipeline.planning.plan import make_plan


def test_adds_the_setup_file_only_when_no_dependency_flag_is_given():
    local = LOCAL_BEAM_ARGS.split()
    assert with_setup_file(local, "/x/setup.py") == [*local, "--setup_file=/x/setup.py"]
    for given in ("--sdk_container_image=example.com/i:1", "--extra_packages=/p.tar.gz",
                  "--requirements_file=/r.txt", "--setup_file=/mine/setup.py"):
        assert with_setup_file([*local, given], "/x/setup.py") == [*local, given]


def test_tfx_then_keeps_the_args_instead_of_building_a_package(monkeypatch):
    def build():
        raise AssertionError("TFX built its ephemeral sdist")
    monkeypatch.setattr(dependency_utils, "build_ephemeral_package", build)
    args = with_setup_file(LOCAL_BEAM_ARGS.split(), LOCAL_SETUP_FILE)
    assert dependency_utils.make_beam_dependency_flags(args) == args


def test_the_local_pipeline_carries_the_repository_setup_file(tmp_path):
    plan = make_plan(PipelineConfig.from_values(output=str(tmp_path)),
                     DataFacts(10, 800, 200, 28, 28, 28, 1), "cpu", 8 << 30)
    pipeline = create_pipeline(plan, LOCAL_BEAM_ARGS.split())
    assert f"--setup_file={LOCAL_SETUP_FILE}" in pipeline.beam_pipeline_args
    assert LOCAL_SETUP_FILE.endswith("/setup.py")
    with open(LOCAL_SETUP_FILE) as f:
        assert 'name="imagepipe"' in f.read()


def test_direct_runner_does_not_stage_the_setup_file(tmp_path):
    # A path that does not exist: any staging attempt would fail on it.
    args = with_setup_file(LOCAL_BEAM_ARGS.split(), str(tmp_path / "absent" / "setup.py"))
    with beam.Pipeline(options=PipelineOptions(args)) as pipeline:
        counted = pipeline | beam.Create([1, 2, 3]) | beam.combiners.Count.Globally()
        assert_that(counted, equal_to([3]))
