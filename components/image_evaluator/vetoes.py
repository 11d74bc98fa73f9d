"""The vetoes that un-bless a model TFMA blessed: a drifted newest span, a failed audit gate."""
import json
import os
from typing import Optional

from tfx.components.evaluator.constants import (ARTIFACT_PROPERTY_BLESSED_KEY as BLESSED_KEY,
                                                BLESSED_FILE_NAME as BLESSED_FILE,
                                                NOT_BLESSED_FILE_NAME as NOT_BLESSED_FILE)

from core.contract import DRIFT_FILE, DRIFT_PROPERTY, VETOED_PROPERTY, read_drift
from components.drift_validator.verdict import drift_gate
from core.storage import files


def judge_drift(drift_uri: Optional[str], blessing, allow_drift) -> Optional[str]:
    """Why a model judged on a drifted newest span must not be blessed (--allow-drift).

    `drift_uri` is the ImageDistributionValidator's ExampleAnomalies folder (None
    without one: data without spans). Its verdict goes onto the blessing, as
    DRIFT_PROPERTY and DRIFT_FILE, which the Pusher, the model card and the run report
    read. The veto is here, not only in the Pusher: a blessed model is a later run's
    baseline and warm start, and one trained on drifted data must be neither.
    """
    verdict = read_drift(drift_uri)
    if verdict is None:
        return None
    blessing.set_string_custom_property(DRIFT_PROPERTY, json.dumps(verdict))
    files.write_text(os.path.join(blessing.uri, DRIFT_FILE),
                     json.dumps(verdict, indent=2, ensure_ascii=False) + "\n")
    blocked, _ = drift_gate(verdict, bool(allow_drift))
    return blocked


def veto(blessing, reason: str) -> None:
    """Records why on the blessing, blessed by TFMA or not; un-blesses a blessed one."""
    blessing.set_string_custom_property(VETOED_PROPERTY, reason)
    if blessing.get_int_custom_property(BLESSED_KEY) != 1:
        return
    blessing.set_int_custom_property(BLESSED_KEY, 0)
    files.remove(os.path.join(blessing.uri, BLESSED_FILE))
    files.write_bytes(os.path.join(blessing.uri, NOT_BLESSED_FILE), b"")


def blessed_by_tfma(blessing_uri: str) -> bool:
    """Whether TFMA's validation blessed the model (the BLESSED file it writes), before any
    veto."""
    return files.exists(os.path.join(blessing_uri, BLESSED_FILE))
