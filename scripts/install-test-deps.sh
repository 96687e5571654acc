#!/usr/bin/env bash
# Installs what the OS sandbox of task workers needs, for the tests (and CI): bubblewrap,
# socat and ripgrep on Linux (Debian/Ubuntu via apt-get), ripgrep on macOS. Idempotent:
# installs nothing when the commands are already there. Never prompts (CI has no stdin).
set -euo pipefail

missing_linux() {
  local packages=()
  command -v bwrap >/dev/null 2>&1 || packages+=(bubblewrap)
  command -v socat >/dev/null 2>&1 || packages+=(socat)
  command -v rg >/dev/null 2>&1 || packages+=(ripgrep)
  echo "${packages[@]:-}"
}

case "$(uname -s)" in
  Linux)
    packages=$(missing_linux)
    if [ -z "$packages" ]; then
      echo "sandbox dependencies: bubblewrap, socat and ripgrep are installed"
      exit 0
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
      echo "sandbox dependencies missing ($packages) and apt-get is not available: install them with your package manager" >&2
      exit 1
    fi
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
      if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo="sudo -n"
      else
        echo "sandbox dependencies missing ($packages): run as root or with passwordless sudo: apt-get install $packages" >&2
        exit 1
      fi
    fi
    echo "installing sandbox dependencies: $packages"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086 # word splitting of the package list is intended
    $sudo apt-get update -qq </dev/null
    # shellcheck disable=SC2086
    $sudo apt-get install -y -qq --no-install-recommends $packages </dev/null
    ;;
  Darwin)
    # sandbox-exec ships with macOS; the runtime also needs ripgrep.
    if command -v rg >/dev/null 2>&1; then
      echo "sandbox dependencies: ripgrep is installed"
    elif command -v brew >/dev/null 2>&1; then
      brew install ripgrep </dev/null || echo "could not install ripgrep: tasks will run unsandboxed" >&2
    else
      echo "ripgrep is missing (brew install ripgrep): tasks will run unsandboxed" >&2
    fi
    ;;
  *)
    echo "no OS sandbox on $(uname -s): tasks run unsandboxed"
    ;;
esac
