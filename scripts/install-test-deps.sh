#!/usr/bin/env bash
# Installs what the tests (and CI) need. On Linux (Debian/Ubuntu via apt-get): bubblewrap, socat
# and ripgrep for the OS sandbox of task workers; openssh-server (and openssh-client when ssh is
# missing) for the SSH runner tests, which start a real sshd on 127.0.0.1; and, when running as
# root or with passwordless sudo, a dedicated account `delegate-runner` (no password) that those
# tests log in as. On macOS: ripgrep. Idempotent: installs and creates nothing that is already
# there. Never prompts (CI has no stdin).
set -euo pipefail

RUNNER_USER=delegate-runner

missing_linux() {
  local packages=()
  command -v bwrap >/dev/null 2>&1 || packages+=(bubblewrap)
  command -v socat >/dev/null 2>&1 || packages+=(socat)
  command -v rg >/dev/null 2>&1 || packages+=(ripgrep)
  [ -x /usr/sbin/sshd ] || packages+=(openssh-server)
  command -v ssh >/dev/null 2>&1 || packages+=(openssh-client)
  echo "${packages[@]:-}"
}

# Empty when running as root, "sudo -n" with passwordless sudo; fails otherwise.
privilege() {
  if [ "$(id -u)" -eq 0 ]; then
    echo ""
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "sudo -n"
  else
    return 1
  fi
}

# The account has no password: its shadow field is "*" (no password can match), not useradd's
# "!" (locked), which sshd without PAM treats as "not allowed" even for a key login.
ensure_runner_user() {
  local sudo
  if ! sudo=$(privilege); then
    if id -u "$RUNNER_USER" >/dev/null 2>&1; then
      echo "ssh runner tests: account $RUNNER_USER exists"
    else
      echo "ssh runner tests: no account $RUNNER_USER (needs root or passwordless sudo): they log in as the current user" >&2
    fi
    return 0
  fi
  if id -u "$RUNNER_USER" >/dev/null 2>&1; then
    echo "ssh runner tests: account $RUNNER_USER exists"
  else
    echo "creating account $RUNNER_USER for the ssh runner tests"
    # shellcheck disable=SC2086 # $sudo is empty or "sudo -n"
    $sudo useradd -m -s /bin/bash "$RUNNER_USER" </dev/null
  fi
  # shellcheck disable=SC2086
  if $sudo getent shadow "$RUNNER_USER" </dev/null | cut -d: -f2 | grep -q '^!'; then
    # shellcheck disable=SC2086
    $sudo usermod -p '*' "$RUNNER_USER" </dev/null
  fi
}

case "$(uname -s)" in
  Linux)
    packages=$(missing_linux)
    if [ -z "$packages" ]; then
      echo "test dependencies: bubblewrap, socat, ripgrep and openssh are installed"
    else
      if ! command -v apt-get >/dev/null 2>&1; then
        echo "test dependencies missing ($packages) and apt-get is not available: install them with your package manager" >&2
        exit 1
      fi
      if ! sudo=$(privilege); then
        echo "test dependencies missing ($packages): run as root or with passwordless sudo: apt-get install $packages" >&2
        exit 1
      fi
      echo "installing test dependencies: $packages"
      export DEBIAN_FRONTEND=noninteractive
      # shellcheck disable=SC2086 # word splitting of the package list is intended
      $sudo apt-get update -qq </dev/null
      # shellcheck disable=SC2086
      $sudo apt-get install -y -qq --no-install-recommends $packages </dev/null
    fi
    ensure_runner_user
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
