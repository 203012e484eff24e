"""Where and how kernel work runs: threads, blocks, worker processes, a Dask cluster, a GPU.

The contract layer (bounds, problems) asks a kernel provider for kernels and products
(:class:`~approxpath.compute.kernels.Kernels`); this package decides which provider answers
(:func:`provider`, :func:`products_on`) and on how many threads (:mod:`.parallelism`, the one home of thread counts,
ours and the BLAS's).
"""

from contextlib import contextmanager

from .parallelism import cores, kernel_threads, managed, resolve, threads

__all__ = ["cores", "kernel_threads", "managed", "resolve", "threads", "provider", "products_on", "DEVICES",
           "DEVICE_MIN_N"]

#: The values of ``device=`` (:func:`products_on`).
DEVICES = ("auto", "cpu", "gpu")
#: ``device="auto"`` puts kernel products on a GPU from this many samples on: a path below it
#: makes tens to hundreds of passes of about a second or less each on the CPU (n = 4000, one
#: thread: 1.1-3.1 s on a busy 2-core machine, 0.7 s on two), while importing CuPy or PyTorch and
#: moving :math:`D` to the device costs about a second once.
DEVICE_MIN_N = 4096


def provider(X, family, weights, distances, *, search=False, blocked_ok=False):
    """The kernel provider of a bound on the data ``X``: :class:`~approxpath.compute.kernels.Kernels` on
    the stored distances (with a search's caches, :class:`~approxpath.compute.caches.KernelCache`,
    if ``search``), or, for a bound that needs kernel products only (``blocked_ok``) when the
    dense arrays do not fit the memory (:func:`approxpath.memory.kernels_mode`),
    :class:`~approxpath.compute.blocked.BlockedKernels` (the distances stored if they fit, else
    computed block by block).  :func:`products_on` may hand a bound another provider for a run.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The data (:math:`D` itself with ``family="precomputed"``); a dense provider reads only n.
    family, weights : str, sequence of float or None
        The kernel family (:mod:`approxpath.kernel_families`) and ``"ard"``'s feature weights, for a blocked provider.
    distances : callable
        ``distances()`` computes :math:`D` (n, n); called only where it is stored (modes ``"dense"``, ``"distances"``).
    search, blocked_ok : bool, default False
        A path search's provider (dense mode judged by a path's memory estimate, else a verification's);
        the bound needs kernel products only (else the mode is always ``"dense"``).
    """
    from ..memory import kernels_mode

    mode = kernels_mode(X.shape[0], search, blocked_ok)
    if mode != "dense":
        from .blocked import BlockedKernels

        return BlockedKernels(X, family, weights, distances() if mode == "distances" else None)
    if search:
        from .caches import KernelCache

        return KernelCache(distances())
    from .kernels import Kernels

    return Kernels(distances())


@contextmanager
def products_on(problem, client=None, device="auto"):
    """Inside the ``with`` block the kernel products of ``problem`` run where this decides, and
    on its provider before after it:

    * ``client`` (a ``dask.distributed.Client``): on its workers, which hold the rows of the
      distances (:func:`approxpath.compute.distributed.split_products`);
    * else on a GPU (:class:`~approxpath.compute.device.DeviceKernels`) with ``device="gpu"``, or
      with ``"auto"`` when one is present (:func:`~approxpath.compute.device.find_accelerator`)
      and ``problem`` has at least :data:`DEVICE_MIN_N` samples; an
      :class:`~approxpath.compute.device.Accelerator` is used as given;
    * else here, on the kernel threads (the provider the bound builds: dense, or blocked where
      the kernels do not fit the memory).

    A problem without a kernel is left as it is.  ``device`` is one of :data:`DEVICES` (None: ``"auto"``) or an
    accelerator; the block gets the provider the products run on (:class:`~approxpath.compute.distributed.SplitKernels`,
    :class:`~approxpath.compute.device.DeviceKernels`), or None where they stay here (or there is no kernel).

    Raises
    ------
    InputError
        ``device`` not in :data:`DEVICES` nor an accelerator (an object with ``xp``); a ``client`` with
        ``device="gpu"`` or an accelerator; ``device="gpu"`` for a problem with a kernel where no GPU is found.
    """
    from ..errors import InputError

    device = "auto" if device is None else device
    given = not isinstance(device, str)  # an Accelerator (the device module is imported only then)
    if (given and not hasattr(device, "xp")) or (not given and device not in DEVICES):
        raise InputError(f"device must be one of {', '.join(DEVICES)}; got {device!r}")
    bound = getattr(problem, "bound", None)
    if client is not None:
        if device == "gpu" or given:
            raise InputError("split products run on the Dask workers' CPUs: use device='auto' or 'cpu' with them")
        from .distributed import split_products

        with split_products(problem, client) as kernels:
            yield kernels
        return
    accelerator = device if given else None
    if device in ("gpu", "auto") and hasattr(bound, "kernels_from") and (device == "gpu" or problem.n >= DEVICE_MIN_N):
        from . import device as _device

        accelerator = _device.find_accelerator()
        if accelerator is None and device == "gpu":
            raise InputError("device='gpu' needs a CUDA GPU with CuPy or PyTorch (pip install 'approxpath[gpu]'); "
                             "neither sees one (no CUDA device, or a CPU-only build)")
    if accelerator is None or not hasattr(bound, "kernels_from"):
        yield None
        return
    from .device import DeviceKernels

    kernels = DeviceKernels(bound.kernels, accelerator, problem.X, bound.family, bound.options["feature_weights"])
    with bound.kernels_from(kernels):
        yield kernels
