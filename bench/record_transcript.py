"""Turn a model-bridge directory into a replay fixture (tests/fixtures/transcripts/NAME).

The bridge (see DEVELOPERS.md) writes NNNN.request.json (the wire request) and NNNN.request.md,
and reads NNNN.response.json. The replay LLM (assay/llm/replay.py) reads the same layout, so a
bridge directory can be replayed as it is; this script trims it to what the replay checks: each
request keeps its skeleton (phase, tools, last turn's tool results, previous calls) and the first
characters of its system prompt and last user turn (for a reader), the responses are kept whole.

    python bench/record_transcript.py BRIDGE_DIR tests/fixtures/transcripts/NAME

Prints one `name: value` line per figure (requests, bytes before and after).

A transcript that joins the CI replays also gets the vectors of the texts its replay embeds (``vectors.npz``,
tests/seeded_vectors.py): run its replay test once with ``pytest --update-goldens`` and commit the file.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay.llm.replay import trim  # noqa: E402


def main(src: Path, dst: Path) -> None:
    reqs = sorted(src.glob("*.request.json"))
    if not reqs:
        sys.exit(f"error: no NNNN.request.json in {src}")
    dst.mkdir(parents=True, exist_ok=True)
    before = after = 0
    for r in reqs:
        n = r.name.split(".")[0]
        resp = src / f"{n}.response.json"
        if not resp.is_file():
            print(f"skipped_unanswered_request: {n}")
            continue
        body = json.loads(r.read_text())
        out = json.dumps(trim(body), indent=1, ensure_ascii=False)
        (dst / r.name).write_text(out + "\n")
        shutil.copyfile(resp, dst / resp.name)
        before += r.stat().st_size + resp.stat().st_size
        after += len(out) + resp.stat().st_size
    print(f"requests: {len(reqs)}")
    print(f"bytes_before: {before}")
    print(f"bytes_after: {after}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: record_transcript.py BRIDGE_DIR FIXTURE_DIR")
    main(Path(sys.argv[1]), Path(sys.argv[2]))
