"""The Trainer's `run_fn`: train the CNN on transformed images, export for serving.

Transform is applied on the fly (Transform runs with materialize=False): the
Trainer reads the raw examples and maps them through the transform graph, the
same graph every serving signature embeds. Decoded float images are never
written to disk, which would cost 4 bytes per pixel-channel.
"""
import os
from typing import List

import tensorflow as tf
import tensorflow_transform as tft
import tf_keras as keras
from tfx import v1 as tfx
from tfx_bsl.public import tfxio

from components.image_example_gen.encode import IMAGE_KEY
from components.image_example_gen.ingest import LABELS_FILE
from modules.model import build_cnn
from modules.preprocessing import IMAGE_XF, LABEL_XF


def read_labels(file_pattern: str) -> List[str]:
    """Class names in label-id order, from labels.txt beside the example splits.

    `file_pattern` is one of FnArgs.train_files: `<examples uri>/Split-train/*`.
    """
    examples_uri = os.path.dirname(os.path.dirname(file_pattern))
    with tf.io.gfile.GFile(os.path.join(examples_uri, LABELS_FILE)) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def epoch_plan(train_steps: int, max_epochs: int = 10):
    """(epochs, steps_per_epoch) whose product is exactly `train_steps`.

    Keras reports and validates once per epoch; the most epochs that divide
    the steps evenly (up to `max_epochs`) gives progress without ever training
    fewer steps than asked.
    """
    if train_steps < 1:
        raise ValueError(f"train_steps must be >= 1, got {train_steps}")
    epochs = max(d for d in range(1, max_epochs + 1) if train_steps % d == 0)
    return epochs, train_steps // epochs


def make_dataset(file_pattern, data_accessor, tft_output: tft.TFTransformOutput,
                 batch_size: int, shuffle: bool) -> tf.data.Dataset:
    """(image, label) batches: raw examples mapped through the transform graph."""
    raw = data_accessor.tf_dataset_factory(
        file_pattern,
        tfxio.TensorFlowDatasetOptions(batch_size=batch_size, shuffle=shuffle,
                                       drop_final_batch=True),
        tft_output.raw_metadata.schema)
    transform = tft_output.transform_features_layer()
    return (raw.map(lambda features: transform(features), num_parallel_calls=tf.data.AUTOTUNE)
            .map(lambda xf: (xf[IMAGE_XF], xf[LABEL_XF]))
            .prefetch(tf.data.AUTOTUNE))


def _serving_signatures(model: keras.Model, tft_output: tft.TFTransformOutput,
                        labels: List[str]) -> dict:
    """`serving_default`: serialized tf.Example in; probabilities, class_id, class_name out."""
    model.tft_layer = tft_output.transform_features_layer()  # tracked, so it is saved
    image_spec = {IMAGE_KEY: tft_output.raw_feature_spec()[IMAGE_KEY]}
    names = tf.constant(labels)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def serve_examples(examples):
        features = tf.io.parse_example(examples, image_spec)
        probabilities = model(model.tft_layer(features)[IMAGE_XF])
        class_id = tf.argmax(probabilities, axis=-1)
        return {"probabilities": probabilities, "class_id": class_id,
                "class_name": tf.gather(names, class_id)}

    return {"serving_default": serve_examples}


def run_fn(fn_args: tfx.components.FnArgs) -> None:
    """TFX Trainer entry point; hyperparameters arrive in `custom_config`."""
    config = fn_args.custom_config
    batch_size = int(config["batch_size"])
    tft_output = tft.TFTransformOutput(fn_args.transform_output)
    labels = read_labels(fn_args.train_files[0])
    train = make_dataset(fn_args.train_files, fn_args.data_accessor, tft_output,
                         batch_size, shuffle=True)
    evaluation = make_dataset(fn_args.eval_files, fn_args.data_accessor, tft_output,
                              batch_size, shuffle=False)
    image_shape = tft_output.transformed_feature_spec()[IMAGE_XF].shape
    model = build_cnn(image_shape, len(labels), float(config["learning_rate"]))
    epochs, steps_per_epoch = epoch_plan(fn_args.train_steps)
    model.fit(train, epochs=epochs, steps_per_epoch=steps_per_epoch,
              validation_data=evaluation, validation_steps=fn_args.eval_steps,
              callbacks=[keras.callbacks.TensorBoard(fn_args.model_run_dir, update_freq=100)],
              verbose=2)
    model.save(fn_args.serving_model_dir, save_format="tf",
               signatures=_serving_signatures(model, tft_output, labels))
