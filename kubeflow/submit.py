"""Submit a compiled pipeline to Kubeflow Pipelines (or print what would be sent).

    .venv/bin/python kubeflow/submit.py --host https://KFP_HOST imagepipe-kubeflow.yaml
    .venv/bin/python kubeflow/submit.py --dry-run imagepipe-kubeflow.yaml

The package is what `imagepipe compile --target kubeflow` wrote. kfp's client
sends both YAML documents: the PipelineSpec and the Kubernetes platform spec
(node selectors). With --dry-run, it loads the package with kfp's public loader
(`kfp.components.load_component_from_file`, the same multi-document parsing the client
uses) and prints what would be sent, without contacting a server.

Caching: KFP caches a step by its inputs. ImageExampleGen's input is the
--data path, not the files in it, so after changing a dataset in place,
submit with --no-cache (or compile with a new --data path).
"""
import argparse
import json
import sys


def dry_run(package: str) -> dict:
    """What the client would send for `package`: the pipeline's name, schema and tasks, and
    the platform spec, read with kfp's public component loader."""
    from google.protobuf import json_format
    from kfp import components  # heavy; after --help
    loaded = components.load_component_from_file(package)
    spec = json_format.MessageToDict(loaded.pipeline_spec)
    platform = json_format.MessageToDict(loaded.platform_spec) or None
    return {"pipeline": spec["pipelineInfo"]["name"], "schema": spec["schemaVersion"],
            "tasks": sorted(spec["root"]["dag"]["tasks"]), "platform_spec": platform}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", help="the compiled .yaml")
    parser.add_argument("--host", help="KFP API endpoint, e.g. https://XXXX-dot-us-central1"
                                       ".pipelines.googleusercontent.com or "
                                       "http://localhost:8080 (kubectl port-forward)")
    parser.add_argument("--namespace", default="kubeflow",
                        help="standalone KFP: kubeflow; multi-user Kubeflow: your profile "
                             "namespace (kubeflow/manifests/multi-user)")
    parser.add_argument("--service-account", default="imagepipe-runner",
                        help="Kubernetes service account of the run's pods "
                             "(kubeflow/manifests)")
    parser.add_argument("--experiment", default="imagepipe")
    parser.add_argument("--run-name", default=None)
    parser.add_argument("--no-cache", action="store_true", help="re-run every step")
    parser.add_argument("--dry-run", action="store_true",
                        help="parse the package as kfp's client does and print it")
    args = parser.parse_args(argv)
    if args.dry_run:
        print(json.dumps(dry_run(args.package), indent=1))
        return 0
    from kfp import client as kfp_client  # heavy; after --help
    if not args.host:
        parser.error("--host is required unless --dry-run")
    result = kfp_client.Client(host=args.host, namespace=args.namespace)\
        .create_run_from_pipeline_package(
            args.package, arguments={}, run_name=args.run_name,
            experiment_name=args.experiment, namespace=args.namespace,
            enable_caching=False if args.no_cache else None,
            service_account=args.service_account)
    print(f"submitted run {result.run_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
