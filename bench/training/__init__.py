"""Training: the Trainer's input, backbones, CPU levers, recipes, GPU precision and workers."""
