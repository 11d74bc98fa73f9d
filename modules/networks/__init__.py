"""The networks the Trainer builds: built in, Keras Applications backbones, or a module file."""
