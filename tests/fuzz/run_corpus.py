#!/usr/bin/env python3
"""Runs the fuzz corpus that make_corpus.py wrote and checks the contract of issue 23.

Usage: run_corpus.py CORPUS_DIR --fusebox PATH [--ui PATH|NONE] [--source SOURCE_DIR] [--jobs 2]
                     [--strict] [--only SUBSTR] [--work DIR] [--verbose]
(--source: write the corpus into CORPUS_DIR first, as make_corpus.py SOURCE_DIR CORPUS_DIR does.)

Each case runs in its own empty work folder ({W}), with HOME and XDG_CACHE_HOME inside it (a
seeded copy of the machine roofline cache, so no case measures the machine) and no display. A
case passes when:
  - it ended within its timeout (else "hang") and not by a signal ("signal"),
  - its exit code is one the case allows (0 for valid input, 2 for bad; never 1) ("exit"),
  - when it exited non-zero, stderr holds each expected fragment: the file's name and the
    pointer / node / input where there is one ("message"),
  - stderr holds no sanitizer report ("AddressSanitizer", "runtime error:", ...) ("sanitizer"),
  - its peak resident memory is within the case's max_rss_mb, where it has one ("memory"; not
    checked in a sanitized build, whose shadow memory is not the program's),
  - the corpus's files are as they were and an output device node it was given is still a
    device node ("wrote outside").
Cases in KNOWN_FAILING (make_corpus.py) that fail count as "known", not failures, unless
--strict; one that passes is reported "fixed: remove from KNOWN_FAILING". Exit 0 when nothing
failed, 1 otherwise.
"""
import argparse
import concurrent.futures
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer", "runtime error:",
                   "ThreadSanitizer", "MemorySanitizer")


def snapshot(root):
    """(type, size, mtime, inode) of everything under root, links not followed."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            out[p] = (stat.S_IFMT(st.st_mode), st.st_size if stat.S_ISREG(st.st_mode) else 0, st.st_mtime_ns, st.st_ino)
    return out


def subst(arg, corpus, work):
    return arg.replace("{C}", corpus).replace("{W}", work)


def run_case(case, corpus, bins, work_root, machine_json, sanitized):
    work = os.path.join(work_root, case["name"].replace("/", "__"))
    os.makedirs(work)
    cache = os.path.join(work, ".cache")
    os.makedirs(os.path.join(cache, "fusebox"))
    if "machine_cache" in case:
        with open(os.path.join(cache, "fusebox", "machine.json"), "w") as f:
            f.write(case["machine_cache"])
    elif machine_json:
        shutil.copy(machine_json, os.path.join(cache, "fusebox", "machine.json"))
    dev = case.get("device_out")
    if dev:
        try:
            os.mknod(os.path.join(work, dev["name"]), 0o666 | stat.S_IFCHR, os.makedev(dev["major"], dev["minor"]))
        except PermissionError:  # not root (no CAP_MKNOD): the case cannot be set up here
            return {"case": case, "skipped": "cannot make a device node (not root)"}
    argv = [bins[case["tool"]]] + [subst(a, corpus, work) for a in case["args"]]
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(HOME=work, XDG_CACHE_HOME=cache)
    timeout = case["timeout"] * (3 if sanitized and case["timeout"] > 5 else 1)
    limits = case.get("rlimits", {})
    if sanitized and ("as_mb" in limits or "nofile" in limits):
        # The sanitizers reserve terabytes of address space, and open files of their own (a
        # report under `ulimit -n 4` was ASan's, not ours).
        return {"case": case, "skipped": "an address-space or file-descriptor limit cannot apply to a sanitized build"}

    def set_limits():
        for key, res in (("as_mb", resource.RLIMIT_AS), ("fsize_kb", resource.RLIMIT_FSIZE)):
            if key in limits:
                v = limits[key] << (20 if key == "as_mb" else 10)
                resource.setrlimit(res, (v, v))
        if "nofile" in limits:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limits["nofile"], limits["nofile"]))

    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=set_limits if limits else None)
    # Reaped here with wait4, for the child's own peak resident memory (ru_maxrss, KiB).
    reaped = {}
    reaper = threading.Thread(target=lambda: reaped.update(zip(("pid", "status", "usage"), os.wait4(proc.pid, 0))))
    chunks = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stderr.read()))
    reaper.start()
    reader.start()
    reaper.join(timeout)
    if reaper.is_alive():
        os.killpg(proc.pid, signal.SIGKILL)
        reaper.join()
        code = None
    else:
        code = os.waitstatus_to_exitcode(reaped["status"])
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left behind
        except ProcessLookupError:
            pass
    proc.returncode = code if code is not None else -9  # reaped already: Popen must not wait again
    reader.join()
    proc.stderr.close()
    err = b"".join(chunks)
    rss_mb = reaped["usage"].ru_maxrss / 1024 if reaped else 0
    seconds = time.monotonic() - start
    err = err.decode("utf-8", "replace")
    problems = []
    if code is None:
        problems.append(("hang", "no exit within %d s" % timeout))
    elif code < 0:
        problems.append(("signal", "killed by signal %d" % -code))
    elif code not in case["exit"]:
        problems.append(("exit", "exit %d, expected %s" % (code, " or ".join(map(str, case["exit"])))))
    if code not in (None, 0):
        missing = [f for f in case["stderr"] if subst(f, corpus, work) not in err]
        if missing:
            problems.append(("message", "stderr lacks %s" % ", ".join(repr(m) for m in missing)))
    if code is not None and case.get("max_rss_mb") and not sanitized and rss_mb > case["max_rss_mb"]:
        problems.append(("memory", "peak resident %.0f MB, over the case's %d MB" % (rss_mb, case["max_rss_mb"])))
    if any(m in err for m in SANITIZER_MARKS):
        problems.append(("sanitizer", "sanitizer report in stderr"))
    if dev and not stat.S_ISCHR(os.lstat(os.path.join(work, dev["name"])).st_mode):
        problems.append(("wrote outside", "replaced the device node %s instead of writing into it" % dev["name"]))
    return {"case": case, "argv": argv, "code": code, "stderr": err, "problems": problems, "seconds": seconds,
            "rss_mb": rss_mb}


def shell_line(argv):
    import shlex
    return " ".join(shlex.quote(os.fsdecode(a) if isinstance(a, bytes) else a) for a in argv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--fusebox", required=True)
    ap.add_argument("--ui", help="fusebox-ui; without it the fusebox-ui cases are skipped")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--strict", action="store_true", help="count KNOWN_FAILING cases as failures")
    ap.add_argument("--only", help="run only the cases whose name contains this")
    ap.add_argument("--work", help="folder for the cases' work folders (default: a new temporary folder, removed)")
    ap.add_argument("--verbose", action="store_true", help="print every case's result")
    ap.add_argument("--source", help="write the corpus first, from this source tree (make_corpus.py)")
    args = ap.parse_args()

    corpus = os.path.abspath(args.corpus)
    if args.source:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import make_corpus
        print(make_corpus.build(args.source, corpus))
    with open(os.path.join(corpus, "cases.json")) as f:
        cases = json.load(f)["cases"]
    bins = {"fusebox": os.path.abspath(args.fusebox)}
    if args.ui and args.ui != "NONE":
        bins["fusebox-ui"] = os.path.abspath(args.ui)
    skipped = [c for c in cases if c["tool"] not in bins]
    cases = [c for c in cases if c["tool"] in bins and (not args.only or args.only in c["name"])]
    # A sanitized build gets longer timeouts (not the 3 s of the special files: they do not run).
    # `fusebox` is the static launcher (app/launcher); the program it starts, fusebox-bin beside
    # it, is the one built with the sanitizers.
    sanitized = False
    for b in (bins["fusebox"], bins["fusebox"] + "-bin"):
        try:
            sanitized = sanitized or "libasan" in subprocess.run(["ldd", b], capture_output=True, text=True).stdout
        except OSError:
            pass

    work_root = args.work or tempfile.mkdtemp(prefix="fusebox-fuzz-")
    os.makedirs(work_root, exist_ok=True)
    started = time.monotonic()
    # One measurement of the machine for every case (the roofline cache), in its own folder.
    seed_dir = os.path.join(work_root, "_machine")
    os.makedirs(seed_dir, exist_ok=True)
    env = dict(os.environ, HOME=seed_dir, XDG_CACHE_HOME=seed_dir)
    # Measured beside another test (CTest runs two at a time), the cache can fail its own sanity
    # check ("an FMA peak at 2 threads far below the one at 1: measured while the machine was
    # busy"); every case would then measure again and the slow ones time out. Reading it back
    # says so: measure again, up to three times.
    for attempt in range(4):  # the first measures; each later one reads it back
        try:  # without it each case measures the machine itself: slower, not wrong
            run = subprocess.run([bins["fusebox"], "machine"], env=env, cwd=seed_dir, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, timeout=300)
        except subprocess.TimeoutExpired:
            break
        if attempt > 0 and b"cannot be used" not in run.stderr:
            break
    machine_json = os.path.join(seed_dir, "fusebox", "machine.json")
    if not os.path.exists(machine_json):
        machine_json = None

    before = snapshot(corpus)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        # The slow ones first (those that may hang, or measure the machine), so the two workers
        # end together.
        order = sorted(cases, key=lambda c: (c["timeout"] > 5, "machine_cache" not in c))
        futures = [pool.submit(run_case, c, corpus, bins, work_root, machine_json, sanitized) for c in order]
        for fut in concurrent.futures.as_completed(futures):
            results.append(fut.result())
    unrun = [r for r in results if "skipped" in r]
    results = [r for r in results if "skipped" not in r]
    after = snapshot(corpus)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    if changed:
        # Blame every case that named a changed file.
        for r in results:
            hit = [p for p in changed if any(os.path.relpath(p, corpus) in a for a in r["case"]["args"])]
            if hit:
                r["problems"].append(("wrote outside", "changed the corpus file(s) " + ", ".join(hit)))
    results.sort(key=lambda r: r["case"]["name"])

    failed, known, fixed = [], [], []
    for r in results:
        is_known = "known" in r["case"]
        if r["problems"]:
            (known if is_known and not args.strict else failed).append(r)
        elif is_known:
            fixed.append(r)
        if args.verbose:
            print("%-8s %5.1fs exit %-4s %s" % ("FAIL" if r["problems"] else "ok", r["seconds"], r["code"],
                                               r["case"]["name"]))

    def show(r, tag):
        print("%s %s: %s" % (tag, r["case"]["name"], "; ".join("%s: %s" % p for p in r["problems"])))
        print("    $ " + shell_line(r["argv"]))
        tail = r["stderr"].strip().splitlines()[-6:]
        for line in tail:
            print("    | " + line[:300])

    for r in failed:
        show(r, "FAIL")
    for r in known:
        print("known %s (%s): %s" % (r["case"]["name"], r["case"]["known"],
                                     "; ".join("%s: %s" % p for p in r["problems"])))
    for r in fixed:
        print("fixed: remove from KNOWN_FAILING: %s (%s)" % (r["case"]["name"], r["case"]["known"]))
    if changed and not any(p[0] == "wrote outside" for r in results for p in r["problems"]):
        print("FAIL corpus files changed by an unknown case: " + ", ".join(changed))
        failed.append(None)

    reasons = {}
    for r in failed:
        if r:
            for p in r["problems"]:
                reasons[p[0]] = reasons.get(p[0], 0) + 1
    elapsed = time.monotonic() - started
    print("\nfuzz corpus: %d cases in %.1f s (%d jobs%s): %d passed, %d failed%s, %d known failing, %d fixed%s"
          % (len(results), elapsed, args.jobs, ", sanitized" if sanitized else "",
             sum(1 for r in results if not r["problems"]), len(failed),
             (" (" + ", ".join("%s %d" % kv for kv in sorted(reasons.items())) + ")") if reasons else "",
             len(known), len(fixed), (", %d fusebox-ui cases skipped (no fusebox-ui)" % len(skipped)) if skipped else "")
          + ((", %d device-node cases skipped (not root)" % len(unrun)) if unrun else ""))
    if not args.work:
        shutil.rmtree(work_root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
