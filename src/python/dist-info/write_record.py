# SPDX-License-Identifier: BSD-3-Clause
"""Writes the RECORD of the dist-info that `cmake --install` installs.

pip removes a distribution by the files its RECORD lists; without one,
`pip uninstall pypamtest` refuses.  Usage:

    write_record.py SITE_DIR DIST_INFO_NAME FILE...

SITE_DIR is where the files were installed (DESTDIR included), each FILE
is relative to it, and DIST_INFO_NAME is the dist-info directory in it:
every file in that directory is listed too, and RECORD itself without a
hash, as the wheel format has it.  Paths in RECORD are relative to
SITE_DIR, so the record stays right under DESTDIR, --prefix or a moved
prefix.
"""
import base64
import csv
import hashlib
import os
import sys


def entry(site, rel):
    with open(os.path.join(site, rel), "rb") as f:
        data = f.read()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return [rel, "sha256=" + digest.rstrip(b"=").decode("ascii"),
            str(len(data))]


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: write_record.py SITE_DIR DIST_INFO_NAME FILE...")
    site, info = sys.argv[1], sys.argv[2]
    record = info + "/RECORD"
    files = list(sys.argv[3:])
    files += sorted(info + "/" + name
                    for name in os.listdir(os.path.join(site, info))
                    if name != "RECORD")
    rows = [entry(site, rel) for rel in files]
    rows.append([record, "", ""])
    tmp = os.path.join(site, record + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    os.replace(tmp, os.path.join(site, record))


if __name__ == "__main__":
    main()
