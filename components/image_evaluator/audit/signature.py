"""The names of the Grad-CAM signature the Trainer exports (modules/signatures.py).

Light (no TensorFlow): the Trainer's export and the audit both import it.
"""
SERVING_GRADCAM = "serving_gradcam"  # pixels [N, S, S, C] + class_id [N] -> heatmap [N, h, w]
CLASS_ID_INPUT = "class_id"  # its second input: the class each map explains (int64)
HEATMAP = "heatmap"  # its output: ReLU of the gradient-weighted feature maps
LAYER = "layer"  # its output: [N] copies of the explained layer's name
