"""ImageExampleGen under LocalDagRunner: unchanged data is a cache hit, a moved file a miss."""
import shutil

import pytest

from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2
from tfx import v1 as tfx

from components.image_example_gen.component import ImageExampleGen
from core.beam_deps import with_setup_file
from settings.config import PipelineConfig
from core.beam_deps import LOCAL_SETUP_FILE

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work


def _run(data, out):
    pipeline = tfx.dsl.Pipeline(
        pipeline_name="cache_test", pipeline_root=str(out / "root"),
        components=[ImageExampleGen(input_base=str(data),
                                    options=PipelineConfig.from_values().ingest_options())],
        enable_cache=True,
        metadata_connection_config=tfx.orchestration.metadata.sqlite_metadata_connection_config(
            str(out / "mlmd.sqlite")),
        beam_pipeline_args=with_setup_file(
            ["--direct_running_mode=in_memory", "--direct_num_workers=1"], LOCAL_SETUP_FILE))
    tfx.orchestration.LocalDagRunner().run(pipeline)
    connection = metadata_store_pb2.ConnectionConfig()
    connection.sqlite.filename_uri = str(out / "mlmd.sqlite")
    executions = metadata_store.MetadataStore(connection).get_executions()
    return [metadata_store_pb2.Execution.State.Name(e.last_known_state)
            for e in sorted(executions, key=lambda e: e.id)]


def test_cache_hit_then_miss_after_moving_one_file(tmp_path, make_image):
    data = tmp_path / "data"
    for i in range(6):
        make_image(data / "a" / f"{i}.png", seed=i)
        make_image(data / "b" / f"{i}.png", seed=10 + i)
    out = tmp_path / "out"
    assert _run(data, out) == ["COMPLETE"]
    assert _run(data, out) == ["COMPLETE", "CACHED"]
    shutil.move(str(data / "a" / "0.png"), str(data / "b" / "moved.png"))  # mtime kept
    assert _run(data, out) == ["COMPLETE", "CACHED", "COMPLETE"]
