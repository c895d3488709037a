# Sourced by the scripts that run Go tools (act-action.sh, act-census.sh, lint-workflows.sh):
# their pinned versions, and where each is found or installed.
# shellcheck shell=bash

ACT_VERSION=v0.2.89
ACTIONLINT_VERSION=v1.7.12

# A Go tool: $VAR; else in $GOBIN when set (installed there at its pinned version if
# missing); else on PATH; else in ~/go/bin, installed there if missing. Exits 2 when it can
# be neither found nor installed.
tool() {
  local var=$1 name=$2 module=$3 version=$4 gobin
  if [ -n "${!var:-}" ]; then echo "${!var}"; return; fi
  if [ -z "${GOBIN:-}" ] && command -v "$name" >/dev/null; then command -v "$name"; return; fi
  gobin=${GOBIN:-$(go env GOPATH 2>/dev/null)/bin}
  if [ ! -x "$gobin/$name" ]; then
    if ! command -v go >/dev/null; then
      echo "${0##*/}: $name is not installed and go is not on PATH to install it" >&2
      exit 2
    fi
    echo "${0##*/}: go install $module@$version into $gobin" >&2
    GOBIN=$gobin go install "$module@$version" >&2 || {
      echo "${0##*/}: go install $module@$version failed" >&2
      exit 2
    }
  fi
  echo "$gobin/$name"
}

act_tool() { tool ACT act github.com/nektos/act "$ACT_VERSION"; }
actionlint_tool() { tool ACTIONLINT actionlint github.com/rhysd/actionlint/cmd/actionlint "$ACTIONLINT_VERSION"; }
