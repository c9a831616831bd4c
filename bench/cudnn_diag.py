"""Where manifests/rmsnorm's cudnn-graph dies (SIGSEGV on its first call on the H100, 2026-12-06).

The launcher (rmsnorm_cudnn.cpp, with the include and link flags the harness gives a cudnn solution)
built into a plain executable ran right on the H100 (2026-12-06, sixteenth session), and in a torch
extension died in the frontend's `Graph::validate`, inside an `std::ostream` insertion compiled into
the extension. This builds the extension in several ways at once (as the harness does; with the
frontend's logs in a file; with -std=c++17; with the launcher in its own shared library: all died), each with a
SIGSEGV handler that prints the native backtrace, and says which C++ runtime each process loaded.
Each run is a child process, so a crash is a line, not the end.

    python bench/cudnn_diag.py            # on the GPU machine
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
HERE = ROOT / "manifests" / "rmsnorm"

HANDLER = r"""
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>
static void on_segv(int sig) {
  void* frames[64];
  int n = backtrace(frames, 64);
  const char msg[] = "\n*** native backtrace ***\n";
  write(2, msg, sizeof msg - 1);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}
__attribute__((constructor)) static void install() { signal(SIGSEGV, on_segv); signal(SIGABRT, on_segv); }
"""

EXT = r"""
import json, subprocess, sys, torch
sys.path.insert(0, sys.argv[1])
from torch.utils.cpp_extension import load
a = json.loads(sys.argv[2])
m = load(name=a["name"], sources=a["sources"], extra_include_paths=a["includes"], extra_ldflags=a["ldflags"],
         extra_cflags=a["cflags"], build_directory=a["build"], with_cuda=True, verbose=False)
maps = {l.split()[-1] for l in open("/proc/self/maps") if "libstdc++" in l or "libgcc_s" in l}
print("loaded:", sorted(maps))
so = next(p for p in __import__("glob").glob(a["build"] + "/*.so"))
nm = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True).stdout
print("the extension defines", nm.count(" W "), "weak symbols;", *(n for m, n in (
    ("_ZNSo9_M_insertIlEERSoT_", "std::ostream::_M_insert<long>"), ("_ZNSt7num_putIcSt19ostreambuf_iteratorIcSt11char_traitsIcEEE2idE", "num_put<char>::id"),
    ("_ZNSt7codecvtIDsc11__mbstate_tE2idE", "codecvt<char16_t>::id")) if m in nm))
print([l.strip()[:600] for l in open(a["build"] + "/build.ninja") if l.startswith("cflags")])
print(subprocess.run(["bash", "-c", f"ldd {so} | grep -E 'stdc|gcc_s|cudnn|nvrtc'"], capture_output=True, text=True).stdout)
x = torch.randn(4, 4096, device="cuda", dtype=torch.bfloat16); w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
y = m.rmsnorm(x, w); torch.cuda.synchronize()
print("extension: max error", (y.float() - torch.nn.functional.rms_norm(x.float(), (4096,), w.float(), 1e-6)).abs().max().item())
"""

LOGS = {"CUDNN_FRONTEND_LOG_INFO": "1", "CUDNN_FRONTEND_LOG_FILE": "stderr",
        "CUDNN_LOGLEVEL_DBG": "2", "CUDNN_LOGDEST_DBG": "stderr"}


def run(what: str, cmd: list[str], env: dict[str, str], timeout: float = 180) -> str:
    """The command's rc and the tail of its output, as text (the variants run at once)."""
    head = f"\n===== {what}\n$ {' '.join(cmd)[:300]}\n"
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return head + "TIMED OUT"
    out = [l for l in (p.stdout + p.stderr).splitlines() if "warning" not in l.lower()]
    return head + f"rc {p.returncode}, {len(out)} lines; the last 70:\n" + "\n".join(l[:300] for l in out[-70:])


ACTIVITIES = r"""
import json, sys, torch
from torch.profiler import ProfilerActivity, profile
from torch.utils.cpp_extension import load
a = json.loads(sys.argv[1])
m = load(name="cudnn_diag_act", sources=a["sources"], extra_include_paths=a["includes"], extra_ldflags=a["ldflags"],
         extra_cflags=["-O1"], build_directory=a["build"], with_cuda=True, verbose=False)
x = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16); w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    m.rmsnorm(x, w); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(6):
            torch.cuda.nvtx.range_push(f"call{i}"); m.rmsnorm(x, w); torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
print("harness-like stream:", s.cuda_stream)
for e in sorted(prof.events(), key=lambda e: e.time_range.start):
    if e.device_type.name == "CUDA" or "aunch" in e.name or "emset" in e.name or "Graph" in e.name or e.name.startswith("cu"):
        print(f"{e.time_range.start:>12.1f} {e.device_type.name:5} {e.name[:70]:70} dur {e.time_range.elapsed_us():8.2f} "
              f"stream {getattr(e, 'device_resource_id', '')} corr {getattr(e, 'correlation_id', '')}")
"""


def activities() -> int:
    """The device work of six calls of the fixed build, as the profiler (CUPTI) records it."""
    from harness.execute.solutions.cuda_cpp import toolchain
    includes, ldflags = toolchain("cudnn", [HERE / "rmsnorm_cudnn.cpp"])
    with tempfile.TemporaryDirectory() as tmp:
        arg = {"sources": [str(HERE / "rmsnorm_binding.cpp"), str(HERE / "rmsnorm_cudnn.cpp")],
               "includes": [str(i) for i in [*includes, HERE]], "build": tmp,
               "ldflags": ldflags + ["-static-libstdc++", "-Wl,--exclude-libs,ALL"]}
        print(run("cudnn-graph's device work under the profiler", [sys.executable, "-c", ACTIVITIES, json.dumps(arg)],
                  dict(os.environ), 300).replace("the last 40", "the last 40 (see the file for all)"))
    return 0


def main() -> int:
    if sys.argv[1:] == ["activities"]:
        return activities()
    from harness.execute.solutions.cuda_cpp import toolchain
    import torch
    print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version(), torch.cuda.get_device_name(0))
    version = subprocess.run(
        ["bash", "-c", "grep -h 'define CUDNN_FRONTEND_M..OR_VERSION\\|define CUDNN_FRONTEND_PATCH' "
         f"{os.environ.get('CUDNN_FRONTEND_DIR', '/tmp/cudnnfe')}/include/cudnn_frontend_version.h"],
        capture_output=True, text=True).stdout
    print("frontend:", " ".join(version.split()))
    includes, ldflags = toolchain("cudnn", [HERE / "rmsnorm_cudnn.cpp"])
    print("includes", [str(i) for i in includes], "ldflags", ldflags)
    env = dict(os.environ, **LOGS)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "handler.cpp").write_text(HANDLER)
        incs = [f"-I{i}" for i in includes] + [f"-I{HERE}"]
        print(subprocess.run(["bash", "-c", "c++ --version | head -1; ldconfig -p | grep libstdc; for o in -O0 -O1 -O3; do "
                              "echo \"c++ $o:\" $(c++ $o -dM -E -x c++ /dev/null | grep -E '_GLIBCXX|FORTIFY|__OPTIMIZE__ ' | tr '\\n' ' '); done"],
                             capture_output=True, text=True).stdout)
        pool = ThreadPoolExecutor(4)
        binding, launcher, handler = str(HERE / "rmsnorm_binding.cpp"), str(HERE / "rmsnorm_cudnn.cpp"), str(t / "handler.cpp")
        o1 = ["-O1", "-g"]  # the example's -O1 (the harness puts -O3 first), -g for the backtrace
        variants = [  # (what, env, cflags, sources, extra ldflags): the first after the harness's own that runs is the fix
            ("as the harness builds it", dict(os.environ), o1, [binding, launcher, handler], []),
            ("-U_GLIBCXX_ASSERTIONS", dict(os.environ), [*o1, "-U_GLIBCXX_ASSERTIONS"], [binding, launcher, handler], []),
            ("-O3, no -g", dict(os.environ), ["-O3"], [binding, launcher, handler], []),
            ("its own C++ runtime: -static-libstdc++ -Wl,--exclude-libs,ALL", dict(os.environ), o1, [binding, launcher, handler],
             ["-static-libstdc++", "-Wl,--exclude-libs,ALL"]),
        ]
        jobs = []
        for k, (what, venv, cflags, sources, extra) in enumerate(variants):
            (t / f"b{k}").mkdir()
            arg = {"name": f"cudnn_diag_{k}", "sources": sources, "includes": [str(i) for i in [*includes, HERE]],
                   "ldflags": ldflags + extra, "cflags": cflags, "build": str(t / f"b{k}")}
            cmd = [sys.executable, "-c", EXT, str(ROOT), json.dumps(arg)]
            jobs.append((cflags, extra, pool.submit(run, f"torch extension: {what}", cmd, venv, 300)))
        fix = None
        for k, (cflags, extra, job) in enumerate(jobs):
            text = job.result()
            print(text, flush=True)
            if k and fix is None and "max error" in text:
                fix = {"extra_cflags": [f for f in cflags if f not in o1], "extra_ldflags": extra}
        print("FIX:", json.dumps(fix))
    return 0


if __name__ == "__main__":
    sys.exit(main())
