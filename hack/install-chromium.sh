#!/usr/bin/env bash
# Installs the headless browser Holdfast's web UI tests drive (internal/testsupport/browser):
# Debian's chromium package, from the machine's package mirrors. A chromium already at
# /usr/bin/chromium is used as is, so the script returns at once after the first run.
#
# Usage: hack/install-chromium.sh            prints the chromium binary's path on its last line
# Runs apt-get as root, or through sudo when not root and sudo exists; fails otherwise.
set -euo pipefail

chromium=/usr/bin/chromium

if [[ -x "${chromium}" ]]; then
  echo "${chromium}"
  exit 0
fi

if [[ "$(id -u)" -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "error: ${chromium} is missing and installing Debian's chromium package needs root (or sudo); install it by hand: apt-get install chromium" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: ${chromium} is missing and there is no apt-get to install Debian's chromium package; install Chromium and set HOLDFAST_CHROMIUM to its path" >&2
  exit 1
fi

echo ">> installing Debian's chromium package (a minute or two the first time)" >&2
# apt-get's progress goes to stderr: stdout carries only the path.
if ! { "${as_root[@]}" apt-get update -qq && "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >&2; then
  echo "error: apt-get could not install chromium (are the package mirrors reachable?)" >&2
  exit 1
fi
if [[ ! -x "${chromium}" ]]; then
  echo "error: the chromium package installed, but ${chromium} is not there" >&2
  exit 1
fi
echo ">> $("${chromium}" --version 2>/dev/null || echo chromium) installed" >&2
echo "${chromium}"
