"""TFLiteConverter: the blessed model as model.tflite, gated on eval accuracy."""
