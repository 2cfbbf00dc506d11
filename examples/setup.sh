# SPDX-License-Identifier: MIT
#
# examples/setup.sh - what every example does first, sourced from the
# repository root by quickstart.sh and fleet.sh:
#
#   . examples/setup.sh
#   ex_missing PKG...     add the Debian packages not installed to $missing
#   ex_install            apt-get install $missing (as root), if any
#   ex_build              build iotap into build/ with meson; sets IOTAP
#
# The packages iotap itself needs to build are in $EX_PKGS.
EX_PKGS="build-essential pkg-config meson ninja-build python3 libfuse3-dev fuse3 liburing-dev liburcu-dev
	libzstd-dev libxxhash-dev libjson-c-dev"
missing=""

ex_missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
}

ex_install() {
	[ -n "$missing" ] || return 0
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086 # a list of package names
	apt-get install -y -qq --no-install-recommends $missing
}

ex_build() {
	[ -f build/build.ninja ] || meson setup build
	ninja -C build
	IOTAP=$PWD/build/tools/iotap
}
