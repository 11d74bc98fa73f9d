"""The vetoes that un-bless a model TFMA blessed: a drifted newest span, a failed audit gate."""
import os
from typing import Optional

from tfx.components.evaluator.constants import (ARTIFACT_PROPERTY_BLESSED_KEY as BLESSED_KEY,
                                                BLESSED_FILE_NAME as BLESSED_FILE,
                                                NOT_BLESSED_FILE_NAME as NOT_BLESSED_FILE)

from components.common.contract import VETOED_PROPERTY, ingest_report
from components.common.drift import drift_gate
from components.common.storage import files


def drift_reason(examples_uri: str, allow_drift) -> Optional[str]:
    """Why a model judged on a drifted newest span must not be blessed (--allow-drift).

    The veto is here, not only in the Pusher: a blessed model is a later run's
    baseline and warm start, and one trained on drifted data must be neither.
    """
    blocked, _ = drift_gate(ingest_report(examples_uri), bool(allow_drift))
    return blocked


def veto(blessing, reason: str) -> None:
    """Records why on the blessing, blessed by TFMA or not; un-blesses a blessed one."""
    blessing.set_string_custom_property(VETOED_PROPERTY, reason)
    if blessing.get_int_custom_property(BLESSED_KEY) != 1:
        return
    blessing.set_int_custom_property(BLESSED_KEY, 0)
    files.remove(os.path.join(blessing.uri, BLESSED_FILE))
    files.write_bytes(os.path.join(blessing.uri, NOT_BLESSED_FILE), b"")
