#!/usr/bin/env bash
# actionlint over the repository's workflows (.github/workflows/*.yml) and the local-runner
# workflows under packaging/*/act/: the GitHub Actions engine's own rules (expressions,
# contexts, reusable workflows' inputs, matrix, needs), and shellcheck over every run: script
# where shellcheck is installed. actionlint is found or installed as scripts/go-tools.sh says.
#
#   scripts/lint-workflows.sh      exit 0 when clean, 1 on findings, 2 when actionlint is missing
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/go-tools.sh
. "$root/scripts/go-tools.sh"
actionlint=$(actionlint_tool)
echo "== actionlint $("$actionlint" --version | head -n 1)"
cd "$root"
# The local-runner workflows call `./.github/workflows/...` and `uses: ./`: actionlint reads
# them as it reads the project's own.
"$actionlint" -no-color .github/workflows/*.yml packaging/*/act/e2e.yml packaging/action/example.yml
echo "== workflows clean"
