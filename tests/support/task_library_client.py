"""Classify image files with the TFLite Task Library, as a phone app does; prints JSON.

    <task-library venv>/bin/python tests/support/task_library_client.py [--scores] MODEL FILE...

Runs in its own interpreter (tflite-support's Task Library pins protobuf<4, which the
pipeline's TFX cannot have): tests/e2e/test_tflite_client.py builds it. Prints one
{"index", "name"} per file, the top class with its name from the model's metadata; with
--scores, every class's score in index order instead (an identity model's scores are
the pixels the Task Library fed it).
"""
import json
import sys


def _scores(categories) -> list:
    scores = [0.0] * len(categories)
    for category in categories:
        scores[category.index] = category.score
    return scores


def main(argv) -> int:
    from tflite_support.task import core, processor, vision
    every = argv[0] == "--scores"
    model, images = argv[int(every)], argv[int(every) + 1:]
    classifier = vision.ImageClassifier.create_from_options(vision.ImageClassifierOptions(
        base_options=core.BaseOptions(file_name=model),
        classification_options=processor.ClassificationOptions(
            max_results=-1 if every else 1)))
    answers = []
    for path in images:
        categories = classifier.classify(vision.TensorImage.create_from_file(path)) \
            .classifications[0].categories
        answers.append(_scores(categories) if every else
                       {"index": categories[0].index, "name": categories[0].category_name})
    print(json.dumps(answers))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
