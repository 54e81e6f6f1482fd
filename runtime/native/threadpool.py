"""The native thread pool compiled programs run their large loops on (issue 18).

`pb_parallel_for(fn, ctx, n, grain)` calls `fn(ctx, lo, hi)` over `[0, n)` split into
contiguous, nearly equal chunks.  With `t = min(threads, n // grain)` participants,
the range is cut into `min(n // grain, OVERSPLIT * t)` chunks that the calling
thread and `t - 1` workers claim one at a time (a generation-tagged atomic counter):
a participant the OS does not run at once delays the loop by one small chunk, not by
its share.  It runs `fn(ctx, 0, n)` inline when `t` is 1 (one thread, or less than
two grains of work), when the pool is already running a loop (a program called from
another Python thread, or a nested call), or in a forked child that has not
re-initialized the pool.  Chunk boundaries depend only on `n`, `grain` and the thread
count, never on which thread runs a chunk.

Why a pool of our own, built from LLVM IR here (no C compiler at run time): the
generated code must call it directly (one indirect call per chunk, no Python, no
GIL), and it must exist in every process that links compiled code, the disk cache's
included.  `ensure()` builds it once per process in an MCJIT engine of its own and
binds its symbols in LLVM's global symbol table (`llvm.add_symbol`), so any object
file linked afterwards resolves `pb_parallel_for`, whichever route emitted it.

The workers are POSIX threads, created on the first loop that needs them (a process
that never runs a large loop has none), one fewer than the thread count.  Idle
workers sleep on a condition variable, never spin: the machine's cores are shared
with BLAS (which keeps its own threads), Python and other processes.

The thread count: `set_num_threads(n)` (also `paddle.base.core.set_num_threads`),
else `PULLBACK_NUM_THREADS`, else `OMP_NUM_THREADS`, else the CPUs this process may
run on, divided among the ranks a launcher started on this machine (`MPI_LOCALNRANKS`
and the like).  It can change at any time; extra workers then just stay asleep.  The
BLAS libraries follow it too, fewer while other processes occupy the cores
(`runtime/native/blas_threads.py`).

Interrupts (Ctrl-C, issue 32).  `pb_call_interruptible(fn, arg)` runs a program's
entry point with a SIGINT handler of this module installed (for that call only,
restored after it): the handler sets bit 0 of one state word, nothing else.  While
the bit is set and the run has not passed its commit point, the pool claims the
remaining chunks of the run's loops without running them, an inline loop stops
between slices, and the generated code skips its remaining segments (`pb_poll`,
called before each).  `pb_commit_point` (called by the generated code before its
first write to a persistable, `lowering/lowerer/base.py`) either abandons the run
(interrupted: every persistable write is skipped) or marks it committed, after
which nothing is skipped: a step is applied whole or not at all.  Only the run of
the thread that called `pb_call_interruptible` is affected (other threads' programs
poll 0).  What Python does with the state is `native/interrupts.py`'s.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

from pullback.runtime.native.env import int_setting
from pullback.runtime.native.llvm_engine import compile_ir

MAX_THREADS = 256
"""Workers the pool can have (more requested threads are capped here)."""

OVERSPLIT = 4
"""Chunks per thread a loop is split into (when it has that many grains): threads
claim chunks as they come, so a thread the OS does not run at once (cores shared
with BLAS, Python and other processes) delays a loop by one small chunk."""

INLINE_SLICES = 16
"""Slices an inline loop of an interruptible run is cut into (polling between them)."""

_SIGACTION_BYTES = 256
"""Room for glibc's `struct sigaction` (152 bytes on x86-64 and AArch64)."""
_SA_FLAGS_AT = 136
"""Offset of `sa_flags` in it (after the handler and the 128-byte `sa_mask`)."""
_SA_RESTART = 0x10000000
"""System calls the handler interrupts restart (the program's BLAS and pool waits)."""

SYMBOLS = ("pb_parallel_for", "pb_num_threads", "pb_poll", "pb_commit_point")
"""What generated code may call (bound for every object file linked after `ensure`)."""

_IR = r"""
@mutex = internal global [256 x i8] zeroinitializer, align 64
@work_cv = internal global [256 x i8] zeroinitializer, align 64
@done_cv = internal global [256 x i8] zeroinitializer, align 64
@claim = internal global i64 0, align 64
@completed = internal global i64 0, align 64
@owner_pid = internal global i32 0
@nthreads = internal global i64 1
@nworkers = internal global i64 0
@gen = internal global i64 0
@busy = internal global i32 0
@job_fn = internal global ptr null
@job_ctx = internal global ptr null
@job_n = internal global i64 0
@job_chunks = internal global i64 0
@job_threads = internal global i64 0
@start_gen = internal global [MAXW x i64] zeroinitializer
; Interrupts (see `Interrupts` in the module docstring): bit 0 an interrupt was
; requested (the SIGINT handler), bit 1 the run passed its commit point.
@state = internal global i32 0, align 64
@armed_tid = internal global i64 0
@job_armed = internal global i32 0
@act_ours = internal global [ACT x i8] zeroinitializer, align 16
@act_prev = internal global [ACT x i8] zeroinitializer, align 16

declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_mutex_init(ptr, ptr)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare i32 @pthread_cond_init(ptr, ptr)
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @pthread_cond_broadcast(ptr)
declare i32 @getpid()
declare i64 @pthread_self()
declare i32 @sigaction(i32, ptr, ptr)

define void @pb_set_num_threads(i64 %t) {
  %small = icmp slt i64 %t, 1
  %a = select i1 %small, i64 1, i64 %t
  %big = icmp sgt i64 %a, MAXT
  %b = select i1 %big, i64 MAXT, i64 %a
  store atomic i64 %b, ptr @nthreads monotonic, align 8
  ret void
}

define i64 @pb_num_threads() {
  %t = load atomic i64, ptr @nthreads monotonic, align 8
  ret i64 %t
}

; (Re)initialize the synchronization objects: once per process, from Python before any
; program runs, and again in a forked child (which inherits no workers).
define void @pb_pool_init() {
  %pid = call i32 @getpid()
  call i32 @pthread_mutex_init(ptr @mutex, ptr null)
  call i32 @pthread_cond_init(ptr @work_cv, ptr null)
  call i32 @pthread_cond_init(ptr @done_cv, ptr null)
  store i64 0, ptr @nworkers
  store i32 0, ptr @busy
  store i32 %pid, ptr @owner_pid
  ; (a forked child runs nothing interruptibly yet: a run in progress was the parent's)
  store i64 0, ptr @armed_tid
  store i32 0, ptr @state
  store ptr @on_sigint, ptr @act_ours
  %flags = getelementptr i8, ptr @act_ours, i64 FLAGS_AT
  store i32 SA_RESTART, ptr %flags
  ret void
}

; SIGINT while an interruptible run is in progress: only an atomic store
; (async-signal-safe); the loops and segments poll it.
define internal void @on_sigint(i32 %sig, ptr %info, ptr %uc) {
  atomicrmw or ptr @state, i32 1 seq_cst
  ret void
}

; 1 when the calling thread's run was interrupted before its commit point (its work
; may be skipped), else 0.  Generated code calls it before each segment.
define i32 @pb_poll() {
entry:
  %s = load atomic i32, ptr @state monotonic, align 4
  %hit = icmp eq i32 %s, 1
  br i1 %hit, label %who, label %no
who:
  %self = call i64 @pthread_self()
  %a = load atomic i64, ptr @armed_tid monotonic, align 8
  %mine = icmp eq i64 %self, %a
  %r = zext i1 %mine to i32
  ret i32 %r
no:
  ret i32 0
}

; Before a program's first write to a persistable: when its run was interrupted,
; `status[0] = -1` (unless a range check failed already): the run is abandoned and
; every guarded write skipped; else the run is committed: from here on nothing of
; it is skipped, so that a step is applied whole.
define void @pb_commit_point(ptr %status) {
entry:
  %self = call i64 @pthread_self()
  %a = load atomic i64, ptr @armed_tid monotonic, align 8
  %mine = icmp eq i64 %self, %a
  br i1 %mine, label %mark, label %go
mark:
  %res = cmpxchg ptr @state, i32 0, i32 2 seq_cst seq_cst
  %old = extractvalue { i32, i1 } %res, 0
  %abandon = icmp eq i32 %old, 1
  br i1 %abandon, label %stop, label %go
stop:
  %s0 = load i64, ptr %status
  %clear = icmp eq i64 %s0, 0
  br i1 %clear, label %mark_status, label %go
mark_status:
  store i64 -1, ptr %status
  br label %go
go:
  ret void
}

; Call `fn(arg)` (a program's packed entry point) as an interruptible run of the
; calling thread: SIGINT sets the state's bit 0 instead of reaching Python's handler
; until `fn` returns.  Returns the state (bit 0: interrupted; bit 1: committed).
define i32 @pb_call_interruptible(ptr %fn, ptr %arg) {
entry:
  store atomic i32 0, ptr @state seq_cst, align 4
  %self = call i64 @pthread_self()
  store atomic i64 %self, ptr @armed_tid seq_cst, align 8
  %rc = call i32 @sigaction(i32 2, ptr @act_ours, ptr @act_prev)
  call void %fn(ptr %arg)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %restore, label %done
restore:
  call i32 @sigaction(i32 2, ptr @act_prev, ptr null)
  br label %done
done:
  store atomic i64 0, ptr @armed_tid seq_cst, align 8
  %s = load atomic i32, ptr @state seq_cst, align 4
  ret i32 %s
}

; Chunk i of n split into c nearly equal ranges: [i*q + min(i, r), + q + (i < r)).
define internal void @run_chunk(ptr %fn, ptr %ctx, i64 %n, i64 %c, i64 %i) {
  %q = udiv i64 %n, %c
  %r = urem i64 %n, %c
  %lt = icmp ult i64 %i, %r
  %m = select i1 %lt, i64 %i, i64 %r
  %iq = mul i64 %i, %q
  %lo = add i64 %iq, %m
  %extra = zext i1 %lt to i64
  %len = add i64 %q, %extra
  %hi = add i64 %lo, %len
  call void %fn(ptr %ctx, i64 %lo, i64 %hi)
  ret void
}

; Claim the next chunk of job `g` (its generation): the claim word holds the job's
; generation (high 32 bits) and the next chunk (low 32), so a participant that
; still holds an older job never takes a chunk of a newer one.  -1: none left.
define internal i64 @claim_chunk(i64 %g, i64 %c) {
entry:
  %tag = shl i64 %g, 32
  br label %try
try:
  %w = load atomic i64, ptr @claim acquire, align 8
  %wtag = and i64 %w, -4294967296
  %mine = icmp eq i64 %wtag, %tag
  br i1 %mine, label %index, label %none
index:
  %i = and i64 %w, 4294967295
  %left = icmp ult i64 %i, %c
  br i1 %left, label %cas, label %none
cas:
  %w1 = add i64 %w, 1
  %res = cmpxchg ptr @claim, i64 %w, i64 %w1 acq_rel acquire
  %ok = extractvalue { i64, i1 } %res, 1
  br i1 %ok, label %got, label %try
got:
  ret i64 %i
none:
  ret i64 -1
}

; Run chunks of the current job until none is left; returns after the last one.
; A chunk of an interrupted run is claimed and counted but not run: the loop ends
; within one chunk per participant and nobody waits for work that never comes.
define internal void @participate(ptr %fn, ptr %ctx, i64 %n, i64 %c, i64 %g) {
entry:
  br label %next
next:
  %i = call i64 @claim_chunk(i64 %g, i64 %c)
  %none = icmp slt i64 %i, 0
  br i1 %none, label %out, label %poll
poll:
  %ja = load atomic i32, ptr @job_armed monotonic, align 4
  %st = load atomic i32, ptr @state monotonic, align 4
  %hit = icmp eq i32 %st, 1
  %armed = icmp ne i32 %ja, 0
  %skip = and i1 %hit, %armed
  br i1 %skip, label %count, label %run
run:
  call void @run_chunk(ptr %fn, ptr %ctx, i64 %n, i64 %c, i64 %i)
  br label %count
count:
  %before = atomicrmw add ptr @completed, i64 1 acq_rel
  %done = add i64 %before, 1
  %last = icmp eq i64 %done, %c
  br i1 %last, label %signal, label %next
signal:
  call i32 @pthread_mutex_lock(ptr @mutex)
  call i32 @pthread_cond_broadcast(ptr @done_cv)
  call i32 @pthread_mutex_unlock(ptr @mutex)
  br label %next
out:
  ret void
}

define internal ptr @worker(ptr %arg) {
entry:
  %idx = ptrtoint ptr %arg to i64
  %slot = getelementptr [MAXW x i64], ptr @start_gen, i64 0, i64 %idx
  %g0 = load i64, ptr %slot
  call i32 @pthread_mutex_lock(ptr @mutex)
  br label %wait
wait:
  %seen = phi i64 [ %g0, %entry ], [ %g, %sleep ], [ %g, %skip ], [ %g, %relock ]
  %g = load i64, ptr @gen
  %same = icmp eq i64 %g, %seen
  br i1 %same, label %sleep, label %woke
sleep:
  call i32 @pthread_cond_wait(ptr @work_cv, ptr @mutex)
  br label %wait
woke:
  %t = load i64, ptr @job_threads
  %wanted = icmp ult i64 %idx, %t
  br i1 %wanted, label %work, label %skip
skip:
  br label %wait
work:
  %fn = load ptr, ptr @job_fn
  %ctx = load ptr, ptr @job_ctx
  %n = load i64, ptr @job_n
  %c = load i64, ptr @job_chunks
  call i32 @pthread_mutex_unlock(ptr @mutex)
  call void @participate(ptr %fn, ptr %ctx, i64 %n, i64 %c, i64 %g)
  br label %relock
relock:
  call i32 @pthread_mutex_lock(ptr @mutex)
  br label %wait
}

define void @pb_parallel_for(ptr %fn, ptr %ctx, i64 %n, i64 %grain) {
entry:
  %tid = alloca i64
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %ret, label %size
size:
  %t = load atomic i64, ptr @nthreads monotonic, align 8
  %g0 = icmp slt i64 %grain, 1
  %g = select i1 %g0, i64 1, i64 %grain
  %most = sdiv i64 %n, %g
  %fewer = icmp slt i64 %most, %t
  %t0 = select i1 %fewer, i64 %most, i64 %t
  %one = icmp sle i64 %t0, 1
  br i1 %one, label %inline, label %pid
pid:
  %me = call i32 @getpid()
  %owner = load i32, ptr @owner_pid
  %forked = icmp ne i32 %me, %owner
  br i1 %forked, label %inline, label %lock
lock:
  call i32 @pthread_mutex_lock(ptr @mutex)
  %b = load i32, ptr @busy
  %taken = icmp ne i32 %b, 0
  br i1 %taken, label %unlock_inline, label %claim
unlock_inline:
  call i32 @pthread_mutex_unlock(ptr @mutex)
  br label %inline
claim:
  store i32 1, ptr @busy
  %gen0 = load i64, ptr @gen
  br label %spawn
spawn:
  %w = load i64, ptr @nworkers
  %need = sub i64 %t0, 1
  %enough = icmp sge i64 %w, %need
  br i1 %enough, label %publish, label %create
create:
  %w1 = add i64 %w, 1
  %slot = getelementptr [MAXW x i64], ptr @start_gen, i64 0, i64 %w1
  store i64 %gen0, ptr %slot
  %arg = inttoptr i64 %w1 to ptr
  %rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @worker, ptr %arg)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %created, label %publish
created:
  store i64 %w1, ptr @nworkers
  br label %spawn
publish:
  %have = load i64, ptr @nworkers
  %most_t = add i64 %have, 1
  %cap = icmp slt i64 %most_t, %t0
  %threads = select i1 %cap, i64 %most_t, i64 %t0
  %solo = icmp sle i64 %threads, 1
  br i1 %solo, label %release_inline, label %go
release_inline:
  store i32 0, ptr @busy
  call i32 @pthread_mutex_unlock(ptr @mutex)
  br label %inline
go:
  ; OVERSPLIT chunks per thread (at least a grain each): a thread the OS does not
  ; run at once (shared cores) delays the loop by one small chunk, not a share.
  %over = mul i64 %threads, OVERSPLIT
  %more = icmp slt i64 %most, %over
  %c = select i1 %more, i64 %most, i64 %over
  %gen1 = add i64 %gen0, 1
  %gen32 = and i64 %gen1, 4294967295
  %tag = shl i64 %gen32, 32
  store ptr %fn, ptr @job_fn
  store ptr %ctx, ptr @job_ctx
  store i64 %n, ptr @job_n
  store i64 %c, ptr @job_chunks
  store i64 %threads, ptr @job_threads
  %jself = call i64 @pthread_self()
  %jarm = load atomic i64, ptr @armed_tid monotonic, align 8
  %jmine = icmp eq i64 %jself, %jarm
  %jflag = zext i1 %jmine to i32
  store atomic i32 %jflag, ptr @job_armed monotonic, align 4
  store atomic i64 0, ptr @completed release, align 8
  store atomic i64 %tag, ptr @claim release, align 8
  store i64 %gen32, ptr @gen
  call i32 @pthread_cond_broadcast(ptr @work_cv)
  call i32 @pthread_mutex_unlock(ptr @mutex)
  call void @participate(ptr %fn, ptr %ctx, i64 %n, i64 %c, i64 %gen32)
  call i32 @pthread_mutex_lock(ptr @mutex)
  br label %join
join:
  %finished_n = load atomic i64, ptr @completed acquire, align 8
  %finished = icmp eq i64 %finished_n, %c
  br i1 %finished, label %end, label %wait
wait:
  call i32 @pthread_cond_wait(ptr @done_cv, ptr @mutex)
  br label %join
end:
  store i32 0, ptr @busy
  call i32 @pthread_mutex_unlock(ptr @mutex)
  br label %ret
inline:
  ; The interruptible run's thread runs an inline loop of two grains or more in
  ; up to INLINE_SLICES slices, polling between them (chunk results do not depend
  ; on the boundaries: `parallelize-loops`).
  %itwo = icmp sge i64 %most, 2
  br i1 %itwo, label %ichk, label %whole
ichk:
  %iself = call i64 @pthread_self()
  %iarm = load atomic i64, ptr @armed_tid monotonic, align 8
  %imine = icmp eq i64 %iself, %iarm
  br i1 %imine, label %slices, label %whole
whole:
  call void %fn(ptr %ctx, i64 0, i64 %n)
  br label %ret
slices:
  %sfew = icmp slt i64 %most, INLINE_SLICES
  %sc = select i1 %sfew, i64 %most, i64 INLINE_SLICES
  br label %sloop
sloop:
  %si = phi i64 [ 0, %slices ], [ %si1, %sdo ]
  %sst = load atomic i32, ptr @state monotonic, align 4
  %shalt = icmp eq i32 %sst, 1
  %sdone = icmp uge i64 %si, %sc
  %sout = or i1 %shalt, %sdone
  br i1 %sout, label %ret, label %sdo
sdo:
  call void @run_chunk(ptr %fn, ptr %ctx, i64 %n, i64 %sc, i64 %si)
  %si1 = add i64 %si, 1
  br label %sloop
ret:
  ret void
}
""".replace("MAXW", str(MAX_THREADS + 1)).replace("INLINE_SLICES", str(INLINE_SLICES)).replace(
    "ACT", str(_SIGACTION_BYTES)).replace("FLAGS_AT", str(_SA_FLAGS_AT)).replace("SA_RESTART", str(_SA_RESTART)).replace("MAXT", str(MAX_THREADS)).replace("OVERSPLIT", str(OVERSPLIT))


class _Pool:
    """The pool's machine code (its engine is kept for the life of the process) and
    ctypes handles on its entry points."""

    def __init__(self, llvm: Any) -> None:
        self.engine = compile_ir(_IR)
        addr = {name: self.engine.get_function_address(name) for name in (*SYMBOLS, "pb_pool_init", "pb_set_num_threads")}
        for name in SYMBOLS:
            llvm.add_symbol(name, addr[name])
        self.init = ctypes.CFUNCTYPE(None)(addr["pb_pool_init"])
        self.init()
        # A forked child inherits the pool's state but none of its threads.
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self.init)
        self.set = ctypes.CFUNCTYPE(None, ctypes.c_int64)(addr["pb_set_num_threads"])
        self.get = ctypes.CFUNCTYPE(ctypes.c_int64)(addr["pb_num_threads"])
        self.call_interruptible = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(
            self.engine.get_function_address("pb_call_interruptible")
        )
        """`pb_call_interruptible(fn, arg)`: `native/interrupts.py` runs programs through it."""
        self.parallel_for = ctypes.CFUNCTYPE(
            None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64
        )(addr["pb_parallel_for"])
        """`pb_parallel_for` itself (the tests drive the pool through it)."""


_lock = threading.Lock()
_pool: _Pool | None = None
_requested: int | None = None


def _cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_LOCAL_RANKS = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE")
"""Where launchers say how many ranks share this machine (MPICH's Hydra, which
`pullback.distributed.launch` uses; Open MPI; torchrun-style launchers)."""


def _local_ranks() -> int:
    """Processes of this job on this machine (1 outside a multi-process launch)."""
    for var in _LOCAL_RANKS:
        try:
            return max(1, int(os.environ.get(var, "")))
        except ValueError:
            continue
    return 1


def default_num_threads() -> int:
    """`PULLBACK_NUM_THREADS`, else `OMP_NUM_THREADS` (its first number), else the
    CPUs available shared among the ranks a launcher started on this machine (so
    data-parallel ranks do not oversubscribe the cores); a value that is not a
    positive integer is an error naming it."""
    for var in ("PULLBACK_NUM_THREADS", "OMP_NUM_THREADS"):
        # OMP_NUM_THREADS may list one count per nesting level: the first is ours.
        value = int_setting(var, what="a positive number of threads", first_of_list=True)
        if value is not None:
            return min(value, MAX_THREADS)
    return max(1, min(_cpus() // _local_ranks(), MAX_THREADS))


def ensure() -> _Pool:
    """Build the pool for this process if not yet built (the compiled backend's JIT
    calls this before it links any program) and return it."""
    global _pool
    with _lock:
        if _pool is None:
            import llvmlite.binding as llvm

            _pool = _Pool(llvm)
            _pool.set(_requested if _requested is not None else default_num_threads())
        return _pool


def built() -> _Pool | None:
    """The pool if `ensure` has built it (a lock-free read: once per compiled run)."""
    return _pool


def set_num_threads(n: int) -> None:
    """Run compiled programs' large loops on `n` threads (1: single-threaded).  Takes
    effect at the next loop; BLAS follows at the next backward or `Executor.run`
    (`runtime/native/blas_threads.py`; `paddle.base.core.set_num_threads` applies it at once)."""
    global _requested
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"set_num_threads: the number of threads must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"set_num_threads: the number of threads must be at least 1, got {n}")
    with _lock:
        _requested = min(n, MAX_THREADS)
        if _pool is not None:
            _pool.set(_requested)


def requested_num_threads() -> int | None:
    """The count `set_num_threads` last gave, or None (the defaults apply): a lock-free
    read, cheap enough for `blas_threads.maybe_apply` to notice a change."""
    return _requested


def get_num_threads() -> int:
    """The thread count compiled programs use now (see the module docstring)."""
    with _lock:
        if _pool is not None:
            return int(_pool.get())
        return _requested if _requested is not None else default_num_threads()


__all__ = ["MAX_THREADS", "built", "default_num_threads", "ensure", "get_num_threads", "requested_num_threads", "set_num_threads"]
