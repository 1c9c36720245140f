#!/usr/bin/env bash
# Installs the system libraries that Qt's xcb/offscreen platforms, screenshots and the 3-D map
# (Mesa's software OpenGL) need, and the Chromium that tests/test_export_page.py opens the interactive page in,
# only when some are missing (so a set-up machine never calls apt-get).
set -eu
pkgs="libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxcb-image0 libxcb-render-util0 libxcb-shape0
      libxcb-xinerama0 libxcb-xkb1 libxkbcommon-x11-0 libxkbcommon0 libegl1 libgl1 libglib2.0-0
      libfontconfig1 libdbus-1-3 fonts-dejavu-core xvfb xauth libgl1-mesa-dri libglx-mesa0 librsvg2-bin chromium"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing system packages:$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
