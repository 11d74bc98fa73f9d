"""Stand-ins for trained models, where a test needs their files and never loads them."""
import pathlib


def stand_in_model(folder, variables: bool = False) -> pathlib.Path:
    """`folder` (created) as a SavedModel looks to the push, rollback and baseline steps.

    Its saved_model.pb holds bytes, not a graph; with `variables`, an empty variables/
    folder is there too.
    """
    folder = pathlib.Path(folder)
    (folder / "variables" if variables else folder).mkdir(parents=True, exist_ok=True)
    (folder / "saved_model.pb").write_bytes(b"graph")
    return folder
