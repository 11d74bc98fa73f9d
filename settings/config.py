"""The one typed configuration of an imagepipe run: a section per stage, every default in it.

Each section is a frozen dataclass of `setting` fields (core/parameters.py). A component's
own settings class is its section where the user sets all of it (`drift`: DriftSettings,
`evaluation`: AuditSettings); the others are in settings/sections.py. Every flag of every
subcommand is generated from the sections (settings/flags.py), and so is the --config file's
shape (settings/config_file.py): a new setting is one field in one section.

A setting's flat name is its flag without dashes (`drift_brightness` for
`--drift-brightness`, `config.drift.brightness` here); `from_values` and `replace` take flat
names, as flags and the --config file give them.
"""
import dataclasses
import hashlib
import os
import re
import shlex
from typing import Any, Dict, List, Type, TypeVar

from core.durations import DURATION_RULE, is_duration
from core.contract import EXAMPLE_GEN_ID, SPAN_STORE_DIR
from core.parameters import bound_problems, flag_of
from core.storage.files import is_remote
from components.image_example_gen.options import IngestOptions, option_problems
from components.image_example_gen.spans import is_pattern
from components.drift_validator.settings import DriftSettings
from components.image_pusher.settings import PushSettings
from components.model_card.settings import CardSettings
from components.serving_validator.settings import ServingCheckSettings
from components.tflite_converter.settings import TFLiteSettings
from components.image_evaluator.settings import AuditSettings
from settings.sections import (DEFAULT_DATA, DEFAULT_MAX_PIXELS, LOCAL_BEAM_ARGS,  # noqa: F401
                               NO_BUDGET, REPO_ROOT, AugmentSettings, BeamSettings,
                               ClusterSettings, ImageLimits, IngestSettings, LoggingSettings,
                               ModelSettings, PushRules, RunSettings, ServingOptions,
                               TFLiteOptions, TFRecordKeys, TrackingSettings, TrainingSettings,
                               TuningSettings)

T = TypeVar("T")


class ConfigError(ValueError):
    """A config value out of range; the message names the flag."""


_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$")
_NAME_RULE = "must be letters, digits, '-' and '_' (no '/', '.' or spaces)"


def field_of(kind: type, name: str) -> dataclasses.Field:
    return next(f for f in dataclasses.fields(kind) if f.name == name)


def construct(kind: Type[T], values: Dict[str, Any]) -> T:
    """A section from its field values; its own range check becomes a ConfigError."""
    try:
        return kind(**values)
    except ValueError as e:
        raise ConfigError(str(e)) from None


def _sections_of(values: Dict[str, Any], current: Dict[str, Any]) -> Dict[str, Any]:
    """Sections with `values` (flat names) applied over `current` (default: defaults)."""
    unknown = sorted(set(values) - set(FLAT))
    if unknown:
        raise TypeError(f"unknown settings {unknown}")
    by_section: Dict[str, Dict[str, Any]] = {}
    for name, value in values.items():
        section, field = FLAT[name]
        by_section.setdefault(section, {})[field] = value
    out = dict(current)
    for section, changed in by_section.items():
        base = current.get(section)
        kept = {} if base is None else {f.name: getattr(base, f.name)
                                        for f in dataclasses.fields(base)}
        out[section] = construct(SECTIONS[section], {**kept, **changed})
    return out


def _section():
    return dataclasses.field(default=None)


@dataclasses.dataclass
class PipelineConfig:
    """Everything a run needs, by stage; paths derived from the output are properties."""

    ingest: IngestSettings = _section()
    images: ImageLimits = _section()
    tfrecord: TFRecordKeys = _section()
    run: RunSettings = _section()
    model: ModelSettings = _section()
    training: TrainingSettings = _section()
    augment: AugmentSettings = _section()
    cluster: ClusterSettings = _section()
    tuning: TuningSettings = _section()
    evaluation: AuditSettings = _section()
    drift: DriftSettings = _section()
    push: PushRules = _section()
    tflite: TFLiteOptions = _section()
    serving: ServingOptions = _section()
    beam: BeamSettings = _section()
    tracking: TrackingSettings = _section()
    logging: LoggingSettings = _section()

    def __post_init__(self):
        """Unset sections take their defaults; then fail at construction, naming the flag,
        rather than three components later."""
        for name, kind in SECTIONS.items():
            if getattr(self, name) is None:
                setattr(self, name, construct(kind, {}))
        problems = [(flag_of(getattr(self, s), n), rule, getattr(getattr(self, s), n))
                    for s in SECTIONS for n, rule in bound_problems(getattr(self, s))]
        problems += [(f"--{name.replace('_', '-')}", rule, self.flat()[name])
                     for name, ok, rule in self._checks() if not ok]
        if problems:
            flag, rule, value = problems[0]
            raise ConfigError(f"{flag} {rule}, got {value}")

    @classmethod
    def from_values(cls, **values) -> "PipelineConfig":
        """A config from flat setting names (`epochs=3`, `drift_brightness=0.2`), the rest
        defaults; an unknown name is a TypeError, a value out of range a ConfigError."""
        return cls(**_sections_of(values, {}))

    def replace(self, **changes) -> "PipelineConfig":
        """A copy with some settings changed, by flat name."""
        current = {name: getattr(self, name) for name in SECTIONS}
        return PipelineConfig(**_sections_of(changes, current))

    def flat(self) -> Dict[str, Any]:
        """{flat name: value} of every setting, in section order."""
        return {name: getattr(getattr(self, section), field)
                for name, (section, field) in FLAT.items()}

    def _checks(self):
        """(flat name, ok, rule) for the rules that span fields or sections."""
        run, ingest, training = self.run, self.ingest, self.training
        unset = training.time_budget in (None, NO_BUDGET)
        checks = [
            # Both become path components (serving/<model-name>/, the pipeline root's
            # context): no separators or '..' that could write outside the output.
            ("model_name", _SAFE_NAME.match(run.model_name) is not None, _NAME_RULE),
            ("pipeline_name", _SAFE_NAME.match(run.pipeline_name) is not None, _NAME_RULE),
            ("state_dir", run.state_dir is None or not is_remote(run.state_dir),
             "must be a local folder (SQLite and file locks need one)"),
            ("span", ingest.span is None or is_pattern(ingest.data),
             "needs a {SPAN} pattern in --data"),
            ("time_budget", unset or is_duration(training.time_budget),
             f"{DURATION_RULE}, or {NO_BUDGET}"),
            # The budget sizes epochs; an exact step count leaves nothing to size.
            ("time_budget", unset or training.train_steps is None,
             "caps epochs, and --train-steps asks for an exact step count: give one"),
            # Each worker would time its own epochs and could settle on another count.
            ("time_budget", unset or self.cluster.workers == 1, "needs --workers 1")]
        checks += [(name, False, rule) for name, rule in option_problems(
            ingest.format, ingest.eval_percent, self.images.max_pixels, ingest.train_spans,
            ingest.span, ingest.span_quiet)]
        return checks
    @property
    def pipeline_root(self) -> str:
        """Where TFX writes component artifacts."""
        return os.path.join(self.run.output, "tfx")

    @property
    def state_path(self) -> str:
        """The local state folder (see `state_dir`); the same for every run of one output."""
        if self.run.state_dir:
            return self.run.state_dir
        if not is_remote(self.run.output):
            return self.run.output
        digest = hashlib.sha256(self.run.output.rstrip("/").encode()).hexdigest()[:12]
        return os.path.join(os.path.expanduser("~"), ".cache", "imagepipe",
                            f"{self.run.pipeline_name}-{digest}")

    @property
    def metadata_path(self) -> str:
        """The SQLite ML Metadata store of this output, in the local state folder."""
        return os.path.join(self.state_path, "metadata.sqlite")

    @property
    def serving_dir(self) -> str:
        """TF Serving model base directory that the Pusher writes versions into."""
        return os.path.join(self.run.output, "serving", self.run.model_name)

    @property
    def tflite_dir(self) -> str:
        """Base directory of the TFLite versions: <version>/model.tflite, labels, info."""
        return os.path.join(self.run.output, "tflite", self.run.model_name)

    @property
    def summary_path(self) -> str:
        """The run summary contract (docs/data.md)."""
        return os.path.join(self.run.output, "summary.json")

    @property
    def beam_pipeline_args(self) -> List[str]:
        """`beam_args` split as a shell would."""
        return shlex.split(self.beam.args)

    def settings_for(self, settings: Type[T], **derived) -> T:
        """A stage's settings dataclass: each field named like a config field takes the
        config's value, `derived` gives the others (and may override); a field that
        neither names is an error, so a new setting cannot be forgotten on the way."""
        own = self.flat()
        names = [f.name for f in dataclasses.fields(settings)]
        missing = [n for n in names if n not in derived and n not in own]
        if missing:
            raise TypeError(f"{settings.__name__}: no config field or derived value for "
                            f"{missing}")
        return settings(**{n: derived[n] if n in derived else own[n] for n in names})

    def ingest_options(self) -> IngestOptions:
        """The reader settings, for ImageExampleGen and `imagepipe ingest`."""
        store = os.path.join(self.pipeline_root, EXAMPLE_GEN_ID, SPAN_STORE_DIR)
        return self.settings_for(IngestOptions, expected_span=self.ingest.span, span_store=store)

    def drift_settings(self) -> DriftSettings:
        """What the DistributionValidator is told: a threshold per feature."""
        return self.drift

    def push_settings(self) -> PushSettings:
        """What the Pusher is told: where TFLite versions go, and the drift rule."""
        return self.settings_for(PushSettings, tflite_dir=self.tflite_dir)

    def serving_check_settings(self) -> ServingCheckSettings:
        """What the InfraValidator is told: the warmup records and the serving check."""
        return self.settings_for(ServingCheckSettings, timeout_s=self.serving.check_timeout,
                                 **SERVING_CHECK)

    def tflite_settings(self) -> TFLiteSettings:
        """What the TFLiteConverter is told: the conversion and its parity gate."""
        return self.settings_for(TFLiteSettings, parity_tolerance=self.tflite.tolerance)

    def card_settings(self) -> CardSettings:
        """What the ModelCardGenerator is told."""
        return self.settings_for(CardSettings)

    def audit_settings(self) -> AuditSettings:
        """The Evaluator's blessing gates beyond TFMA's thresholds."""
        return self.evaluation



SECTIONS = {f.name: f.type for f in dataclasses.fields(PipelineConfig)}
# flat name -> (section, field): the flag's name without dashes; FLAT_OF the inverse.
FLAT = {flag_of(kind, f.name)[2:].replace("-", "_"): (section, f.name)
        for section, kind in SECTIONS.items() for f in dataclasses.fields(kind)}
FLAT_OF = {where: name for name, where in FLAT.items()}
# The settings a training plan fills when the user leaves them unset (pipeline/planning/).
PLANNED = tuple(name for name, (section, field) in FLAT.items()
                if field_of(SECTIONS[section], field).metadata.get("planned"))


# The InfraValidator's warmup records and serving check (components/serving_validator/).
SERVING_CHECK = {
    "warmup_records": 100,  # eval images, one request each; TF Serving replays at most 1,000
    "warmup_max_bytes": 8 << 20,  # the file is copied into every version: bound camera photos
    "warmup_batch_sizes": (8, 32),  # batches batching.config's max_batch_size lets form
    "rest_requests": 32,  # timed single-image REST requests, for p50/p99
    "atol": 1e-4,  # REST answers vs the Evaluator's signature, per probability
}
