"""The shipped images as `make images` writes them (build/images/<image>.tar, docker archives):

- sizes within the goals of issue #36 (operator <= 40 MB, trainer <= 60 MB; MB = 10^6 bytes, the
  figure `make images` prints), each printed;
- nothing but the binaries, the libraries they load, CA certificates and the trainer's dataset: no
  shell, no package manager;
- every library the binaries need is there: each runs (--version) chrooted into its image's files
  (root needed, as for `make images` itself).

Run with the system Python: `python3 -m unittest -v images_test` from this directory."""
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest

ROOT = os.environ.get("DISTTRAIN_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
IMAGES = os.path.join(ROOT, "build", "images")
GOALS_MB = {"operator": 40, "trainer": 60}
BINARIES = {"operator": ["usr/local/bin/disttrain-operator", "usr/local/bin/kubectl-dtr"],
            "trainer": ["usr/local/bin/disttrain-trainer"]}
FORBIDDEN = ["bin/sh", "usr/bin/sh", "bin/bash", "usr/bin/bash", "bin/dash", "usr/bin/dash", "usr/bin/apt",
             "usr/bin/apt-get", "usr/bin/dpkg", "bin/busybox"]


class Image:
    """One docker-archive image: its layers, applied in order into a directory."""

    def __init__(self, name):
        self.path = os.path.join(IMAGES, f"{name}.tar")
        if not os.path.exists(self.path):
            raise AssertionError(f"{self.path} is missing: run `make images` first")
        self.dir = tempfile.mkdtemp(prefix=f"image-{name}-")
        self.members, self.bytes = {}, 0
        with tarfile.open(self.path) as archive:
            manifest = json.load(archive.extractfile("manifest.json"))
            for layer in manifest[0]["Layers"]:
                with tarfile.open(fileobj=archive.extractfile(layer)) as t:
                    for m in t.getmembers():
                        self.members[m.name.lstrip("./")] = m
                        self.bytes += m.size
                    t.extractall(self.dir, filter="fully_trusted")
        self.archive_bytes = os.path.getsize(self.path)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class ImagesTest(unittest.TestCase):
    def check(self, name):
        image = Image(name)
        self.addCleanup(image.close)
        mb = image.archive_bytes / 1e6
        print(f"image {name}: {mb:.1f} MB archive ({image.bytes / 1e6:.1f} MB of files, {len(image.members)} "
              f"entries); goal <= {GOALS_MB[name]} MB")
        self.assertLessEqual(mb, GOALS_MB[name])
        present = [p for p in FORBIDDEN if p in image.members or os.path.lexists(os.path.join(image.dir, p))]
        self.assertEqual(present, [], "a shell or package manager in the image")
        for binary in BINARIES[name]:
            r = subprocess.run(["chroot", image.dir, "/" + binary, "--version"], capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(r.returncode, 0, f"/{binary} does not run in its image: {r.stderr.strip()}")
            self.assertIn("0.", r.stdout)
        self.assertTrue(os.path.exists(os.path.join(image.dir, "etc/ssl/certs/ca-certificates.crt")))
        self.assertEqual(os.stat(os.path.join(image.dir, "tmp")).st_mode & 0o7777, 0o1777)
        return image

    def test_operator_image(self):
        self.check("operator")

    def test_trainer_image(self):
        image = self.check("trainer")
        data = os.path.join(image.dir, "usr/share/datasets/fashion-mnist")
        self.assertEqual(len([f for f in os.listdir(data) if f.endswith(".gz")]), 4)


if __name__ == "__main__":
    unittest.main()
