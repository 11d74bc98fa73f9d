"""The training plan's rules: every number the planner decides with, and nothing else.

pipeline/planning/plan.py applies them; settings/config.py holds the settings
a user can give instead. Values that a stage needs at run time (the epoch
rule for TFRecords, whose size is known only then; the decode cache's disk
headroom) reach it through TrainerParams, so modules/ defines none.
"""
# The one home of the imbalance threshold is the data-health check: the ingest
# report names the same remedy the plan applies.
from components.image_example_gen.data_health.imbalance import IMBALANCE_RATIO  # noqa: F401

# Each network's own defaults (learning rate, augmentation, accuracy threshold, input
# side, the cnn's small-set rules) are its entry in modules/network_registry.py, so that
# adding a network touches that file alone. The data's own network: small grayscale
# images at most the cnn's largest side get the cnn, others the photo model.
from modules.network_registry import CNN_MAX_SIDE  # noqa: F401

WARMUP_EPOCHS = 1.0  # linear learning-rate warmup before the cosine decay
# Decoded splits up to this size (and this share of the memory limit) stay
# in memory after the first epoch; larger ones are cached in a file.
DECODE_CACHE_BYTES = 1 << 30
DECODE_CACHE_SHARE = 8
# A compiled Trainer's memory when neither --trainer-memory nor a known Vertex
# machine type gives it: sizes its decode cache (the cluster is not this machine).
COMPILED_TRAINER_MEMORY = 8 << 30

# Batch per replica: the largest of these (multiples of 8, as TPUs need) that
# still gives an epoch MIN_STEPS_PER_EPOCH steps; a few hundred images at 64
# would make a handful of steps an epoch, too few for warmup or early stopping.
BATCH_SIZES = (64, 32, 16, 8)
MIN_STEPS_PER_EPOCH = 10
# Pretrained backbones (--weights imagenet or a file): a first phase trains the
# new head alone for this share of the epochs, then the backbone's top blocks
# train too, at this fraction of the learning rate (a tenth, as TensorFlow's
# transfer-learning tutorial does), so they move without forgetting.
FINE_TUNE_HEAD_SHARE = 1 / 3
FINE_TUNE_LR_FACTOR = 0.1
# Pretrained features need far fewer passes than training from scratch.
FINE_TUNE_MAX_EPOCHS = 12
# Training must fit in this share of the memory limit; the rest is headroom
# for TensorFlow's allocator and other processes.
MEMORY_SHARE = 0.8
# What a Trainer process holds besides the model: TensorFlow, TFX, Beam and
# the input pipeline's buffers (docs/training.md compares it with measured peaks).
TRAINER_BASE_BYTES = 1_500_000_000

# Training length from the train split's size: about this many examples seen
# in all, within [MIN_EPOCHS, MAX_EPOCHS] epochs. Small sets need many passes;
# large ones learn enough in a few, and a laptop CPU cannot afford more.
EXAMPLES_BUDGET = 900_000
MIN_EPOCHS, MAX_EPOCHS = 3, 40
# A split is cached on disk only if the disk keeps this much free afterwards.
DISK_HEADROOM = 2 << 30
# How long the workers of a multi-worker training may take to find each other
# before one gives up naming the others: TensorFlow's own rendezvous has no bound.
RENDEZVOUS_S = 300.0
# Under parameter servers every call into the training function is a round
# trip from the coordinator to a worker: a call runs this many steps, unless
# --steps-per-execution asks for more.
PS_STEPS_PER_EXECUTION = 8

# A warm-started model begins where the last blessed one ended, so an eighth
# of the planned epochs (at least one). Half was no faster than training from
# scratch was when it still stopped early, well before its planned epochs; what
# an eighth costs and scores: bench/training/warm_start_chain.py, docs/training.md.
WARM_START_EPOCH_SHARE = 0.125

# Class weights (n / (classes x n_c), sklearn's "balanced") when the largest
# class has more than IMBALANCE_RATIO (above) times the smallest's train images.
# Below it, weighting moves accuracy little and costs the frequent classes' accuracy.

# --tune (modules/tuning/): a trial trains this share of the epochs the Trainer
# would on the same images, and is scored on this share of the train images
# sampled, held out; the sample is at most this many images and bytes decoded
# (every trial reuses it from memory). The first trials are random, so the
# Bayesian model has points to fit: this share of the trials, at least 2.
TUNE_EPOCH_SHARE = 0.5
TUNE_HOLDOUT_SHARE = 0.2
TUNE_MAX_EXAMPLES = 20_000
TUNE_MAX_BYTES = 384 << 20
TUNE_RANDOM_SHARE = 0.5

# --time-budget (pipeline/planning/time_budget.py): the budget less the other
# stages' expected time is the Trainer's fit cap. The fixed part is a cold run's
# time outside the fit on the bundled digits (start-up, the other stages, the
# Trainer's set-up and export, the report; docs/training.md has the measurement);
# the part per image is ingestion, statistics, Transform and evaluation growing
# with the data (docs/performance.md's scaling table: about 1 ms an image).
BUDGET_FIXED_S = 50.0
# A run on this machine's CPU gets this budget unless the user gives one: the
# same run's time varied about 2x with the host across days (docs/training.md),
# so a default sized by examples alone overshot 10 minutes on a slow day. The
# minute to spare covers the other stages' estimate being short.
CPU_TIME_BUDGET = "9m"
CPU_TIME_BUDGET_ENDS_WITHIN = "10 min"
BUDGET_PER_IMAGE_S = 0.001
BUDGET_UNKNOWN_EXAMPLES = 10_000  # TFRecords are counted only once ingested
BUDGET_MIN_TRAINING_S = 10.0  # a budget that leaves less is refused
# The estimate above is only the plan's: the Trainer re-sizes its cap from the
# run's own clock (modules/training/time_cap.py: measured_cap). It measures what
# ran before the fit, and keeps this share of the estimate for the stages after
# it (its export, evaluation, the release stages, the report); docs/training.md has
# the shares measured on the digits and on flowers.
BUDGET_AFTER_FIT_SHARE = 0.6
# The Trainer times this many epochs (the first pays for tracing and filling the
# input pipeline, the others are steady) while the learning rate holds its peak,
# then decides how many fit (modules/training/time_cap.py).
TIME_CAP_PROBE_EPOCHS = 3
