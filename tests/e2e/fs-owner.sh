#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-owner: a non-root user creates files, directories, a symlink, a FIFO
# and a hard link through the mount (daemon runs as root, allow_other +
# default_permissions): the backing objects belong to that user, as they
# would without the mount. Also: a setgid directory passes its group on,
# permission through a supplementary group works, and a directory the user
# may not write stays closed.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v setpriv >/dev/null || skip "setpriv not installed"
U=$(id -u nobody 2>/dev/null) || skip "no user nobody"
G=$(id -g nobody)
SG=100	# a supplementary group nobody does not have by default

as_user() {	# as_user [--groups LIST] CMD...: run CMD as nobody
	local groups="--clear-groups"
	if [ "$1" = --groups ]; then groups="--groups=$2"; shift 2; fi
	setpriv --reuid=$U --regid=$G $groups -- "$@"
}

mkdir -m 1777 "$BACKING/pub"
mkdir -m 2775 "$BACKING/sgid" && chgrp $SG "$BACKING/sgid" && chmod 2777 "$BACKING/sgid"
mkdir -m 0770 "$BACKING/grp" && chgrp $SG "$BACKING/grp"
mkdir -m 0755 "$BACKING/closed"
TR=$T/owner.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"

P=$MNT/pub
check "user mkdir" as_user mkdir "$P/d"
check "user create" as_user sh -c "echo data > '$P/f'"
check "user create in subdir" as_user sh -c "echo x > '$P/d/g'"
check "user symlink" as_user ln -s f "$P/s"
check "user fifo" as_user mkfifo "$P/p"
check "user hard link" as_user ln "$P/f" "$P/d/h"
check "user rename" as_user mv "$P/d/g" "$P/d/g2"
for o in d f d/g2 s p d/h; do
	own=$(stat -c %u:%g "$BACKING/pub/$o")
	expect_eq "owner of backing pub/$o" "$own" "$U:$G"
done
# the caller's umask applies once (in the kernel), not the daemon's as well
check "user create, umask 002" as_user sh -c "umask 002; echo x > '$P/u'; mkdir '$P/ud'"
expect_eq "mode with umask 002" "$(stat -c %a "$BACKING/pub/u")" 664
expect_eq "dir mode with umask 002" "$(stat -c %a "$BACKING/pub/ud")" 775

# setgid directory: the group comes from the directory
check "user create in setgid dir" as_user touch "$MNT/sgid/f"
check "user mkdir in setgid dir" as_user mkdir "$MNT/sgid/d"
expect_eq "group in setgid dir" "$(stat -c %u:%g "$BACKING/sgid/f")" "$U:$SG"
expect_eq "setgid inherited by subdir" "$(stat -c %A "$BACKING/sgid/d" | cut -c7)" s

# a group-writable dir reachable only through a supplementary group
check "create via supplementary group" as_user --groups $SG touch "$MNT/grp/f"
expect_eq "owner via supplementary group" "$(stat -c %u:%g "$BACKING/grp/f")" "$U:$G"
as_user touch "$MNT/grp/g" 2>/dev/null && fail "created in grp/ without the group"

# no write permission: refused, nothing created
as_user touch "$MNT/closed/f" 2>/dev/null && fail "created in a directory without write permission"
[ -e "$BACKING/closed/f" ] && fail "file appeared in closed/"

# the user's own files stay theirs when root writes to them
echo more >> "$P/f" || fail "root append"
expect_eq "owner after root append" "$(stat -c %u "$BACKING/pub/f")" "$U"

iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
n=$("$IOTAP" dump "$TR" --op create,mkdir | awk -v u=$U '$8 == 0 && index($0, "uid=" u " ")' | wc -l)
[ "$n" -ge 4 ] || fail "expected creations recorded with uid $U, found $n"
exit 0
