"""How far the perceptual hash moves when a photo is re-encoded or resized.

    .venv/bin/python -m bench.ingestion.near_copies --data ~/datasets/flowers_photos
    .venv/bin/python -m bench.ingestion.near_copies --data DIR --photos 300 --full-decode

Takes --photos JPEG/PNG files of an image folder (a fixed random sample),
makes two copies of each in memory: re-encoded as JPEG at quality 60-80, and
resized to 0.5-0.8x (bilinear) then saved as JPEG 90. Each file goes through
ingestion's own decode and hash (encode.decode_scaled, encode.perceptual_hash),
so the copies are found exactly as `imagepipe inspect` would find them.
Prints, per kind of copy, how many photos moved by each count of bits and
the share within near_index.NEAR_THRESHOLD; for pairs of different photos,
the smallest and median distance. --full-decode decodes every file at full
size instead (the baseline the scaled decode is compared with). Writes
bench/results/near_copies[_full].json.
"""
import argparse
import collections
import io
import pathlib
import random
import statistics

from bench.common import machine_info, print_table, write_results

_KINDS = ("re-encoded", "resized")


def _copies(data: bytes, rng: random.Random) -> dict:
    """The photo's two copies, as file bytes."""
    from PIL import Image
    image = Image.open(io.BytesIO(data)).convert("RGB")
    reencoded, resized = io.BytesIO(), io.BytesIO()
    image.save(reencoded, format="JPEG", quality=rng.randint(60, 80))
    scale = rng.uniform(0.5, 0.8)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    image.resize(size, Image.BILINEAR).save(resized, format="JPEG", quality=90)
    return {"re-encoded": reencoded.getvalue(), "resized": resized.getvalue()}


def _hasher(full_decode: bool):
    from components.image_example_gen.encoding import encode
    from settings.config import DEFAULT_MAX_PIXELS

    def hash_of(data: bytes):
        if full_decode:
            image = encode.decode_fully(data, DEFAULT_MAX_PIXELS)
            return encode.perceptual_hash(image)
        return encode.perceptual_hash(*encode.decode_scaled(data, DEFAULT_MAX_PIXELS))
    return hash_of


def measure(paths, full_decode: bool, seed: int = 0) -> dict:
    """Bit counts moved per kind of copy, and distances between different photos."""
    from components.image_example_gen.data_health.hashing import hamming
    from components.image_example_gen.data_health.near_index import NEAR_THRESHOLD
    rng, hash_of = random.Random(seed), _hasher(full_decode)
    originals, moved = [], {kind: collections.Counter() for kind in _KINDS}
    for path in paths:
        data = path.read_bytes()
        original = hash_of(data)
        if original is None:  # too small to hash
            continue
        originals.append(original)
        for kind, copy in _copies(data, rng).items():
            moved[kind][hamming(original, hash_of(copy))] += 1
    apart = [hamming(a, b) for i, a in enumerate(originals) for b in originals[i + 1:]]
    rows = [{"copy": kind, "photos": sum(counts.values()),
             "within": round(sum(n for bits, n in counts.items() if bits <= NEAR_THRESHOLD)
                             / max(1, sum(counts.values())), 4),
             "bits_moved": dict(sorted(counts.items()))} for kind, counts in moved.items()]
    rows.append({"copy": "different photos", "photos": len(apart),
                 "within": round(sum(d <= NEAR_THRESHOLD for d in apart) / max(1, len(apart)), 4),
                 "bits_moved": {"min": min(apart, default=None),
                                "median": statistics.median(apart) if apart else None}})
    return {"threshold": NEAR_THRESHOLD, "rows": rows}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="an image folder (read only)")
    parser.add_argument("--photos", type=int, default=300, help="how many photos to sample")
    parser.add_argument("--full-decode", action="store_true",
                        help="decode every file at full size (the baseline)")
    args = parser.parse_args(argv)
    paths = sorted(p for p in pathlib.Path(args.data).rglob("*")
                   if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    paths = random.Random(0).sample(paths, min(args.photos, len(paths)))
    result = measure(paths, args.full_decode)
    print_table(result["rows"], ["copy", "photos", "within", "bits_moved"])
    name = "near_copies_full" if args.full_decode else "near_copies"
    return write_results(name, {"machine": machine_info(), "data": args.data,
                                "full_decode": args.full_decode, **result})


if __name__ == "__main__":
    main()
