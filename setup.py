"""imagepipe: TFX pipeline components for image classification.

Install with `bash scripts/install.sh`, not with plain pip:
tfx 1.16.0 declares Requires-Python <3.11 and must go in with
--ignore-requires-python, after its dependencies (see docs/install.md).
"""
from setuptools import find_packages, setup

# The installed packages, bottom to top (tests/test_codebase_shape.py keeps the order).
# kubeflow/ (deploy assets and the KFP emulator, a development tool) is not one of them.
PACKAGES = ("core", "components", "modules", "settings", "report", "prediction", "rollback",
            "monitor", "retention", "pipeline", "kfp_compiler", "cli")

setup(
    name="imagepipe",
    version="0.1.0",
    description="Production TFX pipeline for image classification",
    python_requires=">=3.10,<3.12",
    # kubeflow/ is deliberately NOT a package: a top-level `kubeflow` module
    # would shadow the real `kubeflow` namespace that kfp extensions use.
    packages=find_packages(include=[f"{top}{sub}" for top in PACKAGES for sub in ("", ".*")]),
    install_requires=[
        # Versions are pinned in constraints.txt; these are the direct imports.
        "tfx==1.16.0",
        "tensorflow>=2.16,<2.17",
        "tf-keras>=2.16,<2.17",
        "tensorflow-transform>=1.16,<1.17",
        "tensorflow-model-analysis>=0.47,<0.48",
        "apache-beam>=2.59,<3",
        "ml-metadata>=1.16,<1.17",
        "kfp>=2.7,<2.14",
        "pillow",
        "matplotlib>=3.8,<3.10",
        "numpy<2",
        "pyyaml",
        "jinja2",  # the model card's HTML
        "jsonschema",  # the model card checked against its schema
        "keras-tuner>=1.4,<1.5",  # --tune's oracle (the Tuner component needs it too)
        "prometheus-client>=0.26,<0.27",  # `imagepipe monitor --pushgateway`
        "cleanlab>=2.9,<2.10",  # the audit's label-error suspects
    ],
    # Not Python, but read at run time: the model card's schema and template.
    package_data={"components.model_card.format": ["model_card.schema.json",
                                                   "template.html.jinja"]},
    extras_require={
        # --mlflow-uri: MLflow's client, and its server for the tests (requirements.txt).
        "mlflow": ["mlflow>=2.22,<2.23"],
        # The CI workflow's own checks (tests/test_github_workflow.py), and hypothesis for
        # the gates' property tests (docs/install.md says why each).
        # cel-expr-python: the KFP emulator's trigger conditions (kubeflow/kfp_emulator/, a
        # development tool that is not installed).
        "test": ["check-jsonschema>=0.39,<0.40", "zizmor>=1.32,<1.33",
                 "hypothesis>=6.170,<6.171", "cel-expr-python>=0.1.3,<0.2"],
    },
    entry_points={"console_scripts": ["imagepipe=cli.main:console_main"]},
)
