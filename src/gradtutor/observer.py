"""Records the autograd calls a step makes, without changing what they do.

A :class:`torch.overrides.TorchFunctionMode` sees every torch call the user's
code makes, including ``backward``, ``torch.autograd.grad``, ``detach``,
in-place ops, ``retain_grad`` and reads of ``.grad`` / ``.data``. The mode
calls the real function with the same arguments and returns its result (or
lets its exception through unchanged); around it, it tags new autograd
nodes with the line being executed and appends plain records to
:attr:`CallObserver.records`. Tensors in records are held by weak reference
only.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import types
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch.overrides import TorchFunctionMode

from gradtutor import autograd_graph as ag
from gradtutor.model import SAVED_FREED, SAVED_MODIFIED
from gradtutor.tracebacks import OVERRIDES_FILE, exception_text, is_tutor_file



@dataclass
class LineContext:
    """Where the user's program is: set by the stepper, read by the observer."""

    origin: ag.Origin = ag.UNKNOWN_ORIGIN

    @property
    def line(self) -> int | None:
        return self.origin.line


@dataclass
class BackwardRecord:
    line: int | None
    api: str  # "backward" or "autograd.grad"
    retain_graph: bool
    create_graph: bool
    freed: int = 0
    accumulated: list[weakref.ref[torch.Tensor]] = field(default_factory=list)
    first_grads: list[weakref.ref[torch.Tensor]] = field(default_factory=list)
    roots: list[weakref.ref[torch.Tensor]] = field(default_factory=list)
    results: list[weakref.ref[torch.Tensor]] = field(default_factory=list)  # autograd.grad's gradients
    library: str | None = None  # the library function the user called that ran it (gradcheck, jacrev)


@dataclass
class FailedBackwardRecord:
    """A backward that raised after the nodes it ran before the failing one
    had filled the .grad of leaves (those gradients stay): the leaves whose
    .grad was None (or zeros) in ``first_grads``, the others in ``accumulated``."""

    line: int | None
    first_grads: list[weakref.ref[torch.Tensor]] = field(default_factory=list)
    accumulated: list[weakref.ref[torch.Tensor]] = field(default_factory=list)


@dataclass
class DetachRecord:
    line: int | None
    how: str  # "detach", "detach_", "data", "no_grad"
    ref: weakref.ref[torch.Tensor]
    source: weakref.ref[torch.Tensor] | None = None
    library: str | None = None  # the library function that called detach(), if not the user's code


@dataclass
class InplaceRecord:
    line: int | None
    origin: ag.Origin
    op: str
    ref: weakref.ref[torch.Tensor]
    version: int
    shape: tuple[int, ...]
    # Set when the change went through ``.data`` (``w.data.add_(...)``,
    # ``w.data = ...``): the tensor whose data it was. Autograd does not see it.
    data_of: weakref.ref[torch.Tensor] | None = None
    # Set when library code made the change, not the user's line itself: the
    # library function the user's line called ("SGD.step") and what kind of
    # call it is (see ``LIBRARY_KINDS``).
    library: str | None = None
    library_kind: str = ""
    # Set when the tensor changed is a view (``u[0]`` in ``u[0][1] = 1``) or
    # what ``detach()`` gave (the values of ``state_dict()`` are): the tensor
    # it is a view of, or was detached from, which changed with it (they
    # share storage and version counter). The view itself is often gone by
    # the step's end.
    view_of: weakref.ref[torch.Tensor] | None = None
    # The op of the node the tensor pointed to before the change
    # ("SigmoidBackward0"; None for a tensor without one): the op it is an
    # output of, as torch's error about a changed saved tensor names it.
    before_op: str | None = None
    # Set when a library module built with inplace=True made the change in
    # its forward, as the user wrote it: "ReLU(inplace=True)".
    module: str | None = None


# What library code that changes tensors in place is doing, by the call the
# user's line made: an optimizer step; setting a module up (constructors,
# reset_parameters, .to()/.apply()'s conversions); anything else.
LIBRARY_KINDS = ("optimizer", "setup", "other")
_SETUP_FUNCTIONS = {"__init__", "reset_parameters", "_apply", "_reset_parameters", "reset_running_stats"}
_WRAPPERS = {"wrapper", "_use_grad", "decorate_context", "_wrapped_call_impl", "_call_impl", "inner", "_fn",
             "maybe_fallback", "_disable_dynamo_if_unsupported"}


@dataclass
class GradSetRecord:
    """``t.grad = value`` (``None`` when an optimizer's zero_grad clears it)."""

    line: int | None
    ref: weakref.ref[torch.Tensor]
    cleared: bool
    library: str | None = None  # the library function the user called that did it (Adam.zero_grad)


@dataclass
class UnfollowedRecord:
    """A function of the program's own made quiet for its settled calls (see
    plain_calls), told at the step of the line that made its last stepped
    call: from its next call on, the line that calls it tells what it does.
    Made by the engine, not the observer."""

    line: int | None
    function: str  # its qualified name, "RNN.forward"
    stepped: int  # its calls followed line by line
    settled: int  # how many of them, the last ones in a row, were settled


@dataclass
class RetainGradRecord:
    line: int | None
    ref: weakref.ref[torch.Tensor]


@dataclass
class RequiresGradRecord:
    """``t.requires_grad = on`` or ``t.requires_grad_(on)`` that changed the
    flag (``model.requires_grad_(False)`` makes one per parameter)."""

    line: int | None
    ref: weakref.ref[torch.Tensor]
    on: bool
    library: str | None = None


@dataclass
class WarningRecord:
    line: int | None
    cause: str
    ref: weakref.ref[torch.Tensor] | None



# The getters and setters of the .grad and .data properties, as the mode receives them.
_TENSOR_BASE = getattr(torch._C, "TensorBase", None) or getattr(torch._C, "_TensorBase")  # renamed in torch 2.2
_GRAD_GET = vars(_TENSOR_BASE)["grad"].__get__
_DATA_GET = vars(_TENSOR_BASE)["data"].__get__
_GRAD_SET = vars(_TENSOR_BASE)["grad"].__set__
_DATA_SET = vars(_TENSOR_BASE)["data"].__set__
_REQUIRES_GRAD_SET = vars(_TENSOR_BASE)["requires_grad"].__set__
# Methods named like in-place ops that do not change a tensor's values.
_NOT_INPLACE = {"requires_grad_", "share_memory_", "retain_grad", "detach_", "record_stream"}
_PYTHON_FUNCTION = types.FunctionType  # (inside __torch_function__, "types" is a parameter)
_PLAIN = object()  # kinds of torch function: see CallObserver._classify
# What a plain call returns when it only reads a tensor (x.shape, x.size(),
# x.item(), x.dtype): it changed no graph, gradient or record.
_READ_ONLY_RESULTS = frozenset({int, float, bool, torch.Size, torch.dtype, torch.device})
# Turns grad mode on or off (no_grad, enable_grad, set_grad_enabled, entered
# and left): it changes no graph, gradient or record either. What the calls
# made under it do is seen at those calls.
_SET_GRAD_ENABLED = torch._C._set_grad_enabled
_PYTHON = object()
_grad_enabled = torch.is_grad_enabled
_gettrace = sys.gettrace
_settrace = sys.settrace
# The observer's own reads of a tensor subclass's attributes (its grad_fn,
# is_leaf...) would reach the subclass's __torch_function__, as calls the
# program never made: when a call involves such a subclass (torch passes its
# type in ``types``), they are made with subclass dispatch off, where it was
# on, and the program's own call with it on again (see CallObserver._run).
_dispatching_to_subclasses = torch._C._is_torch_function_enabled
_NoSubclassDispatch = torch._C.DisableTorchFunctionSubclass
_SubclassDispatch = torch._C._EnableTorchFunction
# A mode's ``types`` for a call no subclass's own __torch_function__ would
# see: of plain tensors, or parameters (torch names nn.Parameter, whose
# __torch_function__ is torch's disabled one: an optimizer's reads of .grad
# are all ``(Parameter,)``). Looked through without hashing; other tuples
# whose classes leave calls to torch are learnt (see _plain_types).
_PLAIN_TYPES = ((), (torch.Tensor,), (torch.nn.Parameter,))
_LEARNT_PLAIN: set[Any] = set()
_TENSOR_TORCH_FUNCTION = torch.Tensor.__torch_function__.__func__  # type: ignore[attr-defined]


def _plain_types(types: Any) -> bool:
    """Do the classes of ``types`` all leave a call to torch (its disabled
    __torch_function__, or Tensor's own), as ``_PLAIN_TYPES``'s do? A plain
    tuple is remembered (up to a bound: classes may be made on the fly)."""
    try:
        if types in _LEARNT_PLAIN:
            return True
        for cls in types:
            handler = getattr(cls, "__torch_function__", None)
            if handler is not torch._C._disabled_torch_function_impl and (
                getattr(handler, "__func__", None) is not _TENSOR_TORCH_FUNCTION
            ):
                return False
        if len(_LEARNT_PLAIN) < 1024:
            _LEARNT_PLAIN.add(types)
    except Exception:  # (a class that cannot be hashed: quieted, as any subclass)
        return False
    return True


def _quiet() -> Any:
    """For a call that involves a subclass (``types`` not plain): a context
    that keeps the observer's reads from it, or None when subclass dispatch
    is off already."""
    return _NoSubclassDispatch() if _dispatching_to_subclasses() else None


_VERSION_RE = re.compile(r"is at version (\d+)")
_SHAPE_RE = re.compile(r"\[torch\.\w+ \[([\d, ]*)\]\]")
# "..., which is output 0 of Sigmoid, ..." (older torch: "of SigmoidBackward0"):
# the saved tensor that changed, by the op that made it.
_OUTPUT_OF_RE = re.compile(r"which is output (\d+) of (\w+)")
_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")

# Error causes, by a stable part of torch's message.
_CAUSES = (
    ("second-backward", (ag.FREED_MESSAGE, ag.FREED_MESSAGE_ALT)),
    ("inplace-modified", (ag.INPLACE_MESSAGE,)),
    ("leaf-inplace", ("leaf Variable that requires grad", "a leaf Variable that requires grad")),
    ("no-grad-fn", ("does not require grad and does not have a grad_fn",)),
    ("non-scalar-backward", ("grad can be implicitly created only for scalar outputs",)),
    ("out-requires-grad", ("arguments don't support automatic differentiation, but one of the arguments requires grad",)),
)


def _caller_frame(func: Any) -> types.FrameType | None:
    """The frame that called ``func``, as it would be without the tutor: above
    the tutor's frames, torch's dispatch to the mode, and ``func``'s own
    dispatching prologue."""
    code = getattr(func, "__code__", None)
    frame = sys._getframe(1)
    while frame is not None and (
        is_tutor_file(frame.f_code.co_filename)
        or frame.f_code.co_filename.endswith(OVERRIDES_FILE)
        or frame.f_code is code
    ):
        frame = frame.f_back  # type: ignore[assignment]
    return frame


_ALWAYS = [("always", None, Warning, None, 0)]


def call_warning_at_caller(
    func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], run: Callable[..., Any] | None = None
) -> Any:
    """Call ``func``; re-issue its warnings where python would have put them.

    Called from the mode, a warning torch raises would be placed at (and
    deduplicated by) the tutor's own frame: shown once for the whole run
    and at the wrong line. Caught here, it is issued again through the
    user's filters and the registry of the module python would have used,
    at the user's line. Caught without ``catch_warnings()``: that tells the
    warnings machinery its filters changed, which makes every module forget
    the warnings it has shown (python would show them once, the tutor again).
    """
    caught: list[Any] = []
    module: Any = warnings
    saved = module.filters, module._showwarnmsg_impl, module.showwarning
    module.filters = _ALWAYS
    module._showwarnmsg_impl = caught.append
    module.showwarning = module._showwarning_orig
    try:
        out = func(*args, **kwargs) if run is None else run(func, args, kwargs)
    finally:
        module.filters, module._showwarnmsg_impl, module.showwarning = saved
    if caught:
        frame = _caller_frame(func)
        for w in caught:
            filename, lineno = w.filename, w.lineno
            misplaced = is_tutor_file(filename) or filename.endswith(OVERRIDES_FILE) or (
                getattr(func, "__code__", None) is not None and filename == func.__code__.co_filename
            )
            module_globals: dict[str, Any] | None
            if misplaced and frame is not None:
                filename, lineno, module_globals = frame.f_code.co_filename, frame.f_lineno, frame.f_globals
            else:
                module_globals = _globals_of(filename, frame)
            registry = module_globals.setdefault("__warningregistry__", {}) if module_globals is not None else None
            warnings.warn_explicit(
                w.message, w.category, filename, lineno,
                module=module_globals.get("__name__") if module_globals else None,
                registry=registry, module_globals=module_globals,
            )
    return out


_module_of_file: dict[str, Any] = {}


def _globals_of(filename: str, frame: types.FrameType | None) -> dict[str, Any] | None:
    """The globals of the frame a warning was placed at (its registry is the
    one python would use): a frame still running, else the module of that file."""
    while frame is not None:
        if frame.f_code.co_filename == filename:
            return frame.f_globals
        frame = frame.f_back
    module = _module_of_file.get(filename)
    if module is None or getattr(module, "__file__", None) != filename:
        module = next((m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == filename), None)
        if module is None:
            return None
        _module_of_file[filename] = module
    return vars(module)


def classify_error(exc: BaseException) -> str:
    """The event cause for an exception: one of ``_CAUSES`` or ``other``."""
    text = exception_text(exc)
    if isinstance(exc, RuntimeError):
        for cause, needles in _CAUSES:
            if any(n in text for n in needles):
                return cause
    return "other"


def _inplace_target(args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.Tensor | None:
    """The tensor an in-place call changes: its first argument, or the one
    passed by keyword (``torch.nn.init.normal_`` hands the mode ``tensor=w``)."""
    if args:
        return args[0] if isinstance(args[0], torch.Tensor) else None
    for key in ("tensor", "input", "self"):
        value = kwargs.get(key)
        if isinstance(value, torch.Tensor):
            return value
    return None


def _tensors_in(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


_FUNCTORCH = f"{os.sep}torch{os.sep}_functorch{os.sep}"


def _under_functorch(frame: types.FrameType | None, is_user_file: Callable[[str], bool]) -> bool:
    """Was this call made by torch.func's own code (before the user's)?"""
    while frame is not None:
        filename = frame.f_code.co_filename
        if _FUNCTORCH in filename:
            return True
        if is_user_file(filename) and not is_tutor_file(filename):
            return False
        frame = frame.f_back
    return False


def _view_base(tensor: torch.Tensor) -> weakref.ref[torch.Tensor] | None:
    """What ``tensor`` is a view of, weakly (None if it is not a view)."""
    try:
        base = tensor._base if tensor._is_view() else None
        return weakref.ref(base) if base is not None else None
    except (RuntimeError, TypeError):
        return None


def _inplace_module(func: Any) -> str | None:
    """The library module built with inplace=True whose forward called
    ``func`` in place (``nn.ReLU(inplace=True)`` calls ``F.relu(x,
    inplace=True)``), as the user wrote it: "ReLU(inplace=True)"."""
    frame = _caller_frame(func)
    if frame is None or frame.f_code.co_name != "forward":
        return None
    owner = frame.f_locals.get("self")
    if isinstance(owner, torch.nn.Module) and getattr(owner, "inplace", None) is True:
        return f"{type(owner).__name__}(inplace=True)"
    return None


def _same_memory(view: torch.Tensor, source: torch.Tensor) -> bool:
    """Do the two tensors lie on the same memory, element for element?"""
    try:
        return (
            view.data_ptr() == source.data_ptr() and view.shape == source.shape
            and view.stride() == source.stride() and view.dtype == source.dtype
        )
    except RuntimeError:  # (a layout without plain memory: sparse, nested)
        return False


def _same_storage(view: torch.Tensor, base: torch.Tensor) -> bool:
    """Does ``view``, a view of ``base``, still lie in ``base``'s memory? Not
    after ``base.data = ...`` gave ``base`` other memory. Yes when it cannot
    be told (a tensor with no storage to look at): a view is made on its
    base's memory."""
    try:
        return view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return True


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str) -> Any:
    """A call's argument, given by position or by name."""
    return args[index] if len(args) > index else kwargs.get(name)


class CallObserver(TorchFunctionMode):
    """The mode that watches the user's torch calls. ``paused`` lets the tutor's
    own bookkeeping run without being observed."""

    def __init__(
        self, registry: ag.TagRegistry, context: LineContext, is_user_file: Callable[[str], bool] | None = None
    ) -> None:
        super().__init__()
        self.registry = registry
        self.context = context
        self.is_user_file = is_user_file or (lambda filename: True)
        self.records: list[Any] = []
        self._record_execs: list[int] = []  # the statement execution each record belongs to
        # Tensors made under no_grad from ones that require grad, in the step
        # running: id -> the tensor, weakly (see _no_grad_outputs).
        self._no_grad_made: dict[int, weakref.ref[torch.Tensor]] = {}
        self.calls = 0  # torch calls seen: a step that made none changed no graph
        # Those of them that only read a tensor (see _READ_ONLY_RESULTS) or
        # switched grad mode: they changed nothing the tutor reports.
        self.reads = 0
        # Custom Function backwards running (see Engine._start_frame): autograd
        # records nothing there by design, which is not the user's no_grad.
        self.in_backward = 0
        # The user's backwards (and autograd.grad calls) running: a step of a
        # hook they call sees the gradients they filled so far, which are
        # the backward's to tell, once it ends (see Engine._grad_changes).
        self.backwards_running = 0
        self.inplace_history: list[InplaceRecord] = []
        self.error_details: dict[int, dict[str, Any]] = {}
        self.paused = False
        self._special: dict[Any, Callable[..., Any]] = {
            torch.Tensor.backward: self._on_backward,
            torch.autograd.backward: self._on_backward,
            torch.autograd.grad: self._on_backward,
            torch.Tensor.detach: self._on_detach,
            torch.Tensor.detach_: self._on_detach,
            torch.Tensor.retain_grad: self._on_retain_grad,
            _GRAD_GET: self._on_grad_read,
            _DATA_GET: self._on_detach,
            _GRAD_SET: self._on_grad_set,
            _DATA_SET: self._on_data_set,
            _REQUIRES_GRAD_SET: self._on_requires_grad,
            torch.Tensor.requires_grad_: self._on_requires_grad,
            torch.nn.functional.batch_norm: self._on_running_stats,
            torch.nn.functional.instance_norm: self._on_running_stats,
        }
        # id(t.data result) -> (weakref to it, weakref to t): an in-place op on
        # it changes t behind autograd's back. Entries leave with the tensor.
        self._data_views: dict[int, tuple[weakref.ref[torch.Tensor], weakref.ref[torch.Tensor]]] = {}
        # id(t.detach() result) -> (weakref to it, weakref to t): the same, but
        # autograd's version counter is shared and sees the change.
        self._detached: dict[int, tuple[weakref.ref[torch.Tensor], weakref.ref[torch.Tensor]]] = {}
        self._signatures: dict[Any, tuple[tuple[str, ...] | None, frozenset[str]]] = {}
        self._kinds: dict[Any, Any] = {}
        self._trace: Any = None  # the stepper's trace function, off while a handler runs
        # Subclass dispatch turned off around a handler's bookkeeping: the
        # program's call it makes (``_run``) turns it on again.
        self._quieted = False
        # The outcome of the call being observed: [done, result, error] (calls
        # nest: hooks, custom Functions). See __torch_function__.
        self._call: list[Any] | None = None
        # (statement execution, exception): failures of the tutor's own while observing.
        self.failures: list[tuple[int, BaseException]] = []
        self._node_tags = registry.node_tags
        self._read_grad = self._special[_GRAD_GET]
        # The library function found for the last in-place change library
        # code made: (the innermost frame it was found from, the answer).
        # An optimizer changes every parameter from one frame.
        self._last_library: tuple[types.FrameType, tuple[str | None, str]] | None = None

    # ---- dispatch -----------------------------------------------------------
    def _classify(self, func: Any) -> Any:
        """What the mode does with ``func``, decided once per function: a
        handler, the name of an in-place op, ``_PYTHON`` (a Python-level API
        such as F.mse_loss, whose warnings must be re-issued at the user's
        line, and which may be asked to work in place) or ``_PLAIN``."""
        handler = self._special.get(func)
        if handler is not None:
            kind: Any = handler
        else:
            name = getattr(func, "__name__", "")
            if name == "__setitem__":
                kind = "[i] = ..."
            elif name.endswith("_") and not name.endswith("__") and name not in _NOT_INPLACE:
                kind = name
            elif type(func) is _PYTHON_FUNCTION:
                kind = _PYTHON
            else:
                kind = _PLAIN
        try:
            if len(self._kinds) < 8192:
                self._kinds[func] = kind
        except TypeError:  # an unhashable callable: classified on every call
            pass
        return kind

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        if kwargs is None:
            kwargs = {}
        if self.paused:
            return func(*args, **kwargs)
        self.calls += 1
        try:
            kind = self._kinds.get(func)
        except TypeError:
            kind = None
        if kind is None:
            try:
                kind = self._classify(func)
            except Exception as exc:  # the tutor's own failure: the call is made as is
                self._failed(exc)
                return func(*args, **kwargs)
        if kind is self._read_grad:
            # A read of .grad (an optimizer reads every parameter's): only a
            # non-leaf's that keeps none is anything to the tutor.
            try:
                quiet = None if types in _PLAIN_TYPES or _plain_types(types) else _quiet()  # (a call here is a traced call)
                if quiet is None:
                    plain_read = args[0].is_leaf or args[0].retains_grad
                else:
                    with quiet:
                        plain_read = args[0].is_leaf or args[0].retains_grad
            except Exception:
                plain_read = False
            if plain_read:
                return func(*args, **kwargs)
        if kind is not _PLAIN:
            # A call with bookkeeping before and after it (a handler, an
            # in-place op, a Python-level API). Its outcome is noted in a slot
            # (``_run``), so that a failure of the tutor's own ends the call as
            # it would end without the tutor: its result, its exception, or
            # the call made now. The bookkeeping runs with the stepper's trace
            # function off (each of its Python calls would be a traced call,
            # several times slower); ``_run`` turns it back on for the call.
            call: list[Any] = [False, None, None]  # done, result, error (see _run)
            outer_call, self._call = self._call, call
            trace = _gettrace()
            if trace is not None:
                _settrace(None)
            outer, self._trace = self._trace, trace
            quiet = None if types in _PLAIN_TYPES or _plain_types(types) else _quiet()
            if quiet is not None:
                quiet.__enter__()
            outer_quieted, self._quieted = self._quieted, quiet is not None
            try:
                if kind is _PYTHON:
                    if kwargs.get("inplace") is True:
                        # (F.relu(x, inplace=True), as nn.ReLU(inplace=True) calls it:
                        # the torch.relu_ inside runs where the mode does not see it.)
                        return self._on_inplace(func, f"{func.__name__}(inplace=True)", args, kwargs)
                    out = call_warning_at_caller(func, args, kwargs, self._run)  # F.mse_loss and other Python APIs
                    self._after_call(args, kwargs, out)
                    return out
                if type(kind) is str:
                    return self._on_inplace(func, kind, args, kwargs)
                return kind(func, args, kwargs)
            except BaseException as exc:
                if exc is call[2] or isinstance(exc, (Warning, KeyboardInterrupt, SystemExit)):
                    call[2] = None  # (the slot would tie the exception to its own traceback: a cycle)
                    raise  # the program's own (a warning its filters make an error included)
                self._failed(exc)
                if call[2] is not None:
                    error, call[2] = call[2], None
                    try:
                        raise error
                    finally:
                        del error  # no cycle through this frame, which the traceback holds
                if call[0]:
                    return call[1]
                if quiet is not None:
                    with _SubclassDispatch():
                        return func(*args, **kwargs)
                return func(*args, **kwargs)
            finally:
                self._quieted = outer_quieted
                if quiet is not None:
                    quiet.__exit__(None, None, None)
                self._trace = outer
                if trace is not None:
                    _settrace(trace)
                self._call = outer_call
        # The plain path, most calls: the program's call, then the tutor's
        # bookkeeping, which must never reach the program.
        out = func(*args, **kwargs)
        if not isinstance(out, (torch.Tensor, tuple, list)) or type(out) is torch.Size:
            if type(out) in _READ_ONLY_RESULTS or func is _SET_GRAD_ENABLED:
                self.reads += 1
            return out  # (None, a number, a flag, a shape: nothing the tutor notes)
        quiet = None if types in _PLAIN_TYPES or _plain_types(types) else _quiet()
        if quiet is not None:
            quiet.__enter__()
        try:
            no_grad = not _grad_enabled() and not self.in_backward
            if not no_grad and isinstance(out, torch.Tensor):
                # A tensor whose node this registry tagged already, the usual
                # case, needs nothing.
                try:
                    fn = out.grad_fn  # (ag.grad_fn_of, inline: a call here is a traced call)
                except RuntimeError:
                    return out
                if fn is None or id(fn.metadata) in self._node_tags:
                    return out
            # What no_grad cut off, and the nodes the call made tagged with the
            # line that made them: untraced, as a handler's work is (each
            # Python call of it would be a traced call).
            trace = _gettrace()
            if trace is not None:
                _settrace(None)
            try:
                if no_grad:
                    self._no_grad_outputs(args, kwargs, out)
                self._tag_made(args, kwargs, out)
            finally:
                if trace is not None:
                    _settrace(trace)
        except Exception as exc:
            self._failed(exc)
        finally:
            if quiet is not None:
                quiet.__exit__(None, None, None)
        return out

    def _failed(self, exc: BaseException) -> None:
        """The tutor failed while observing a call: observation stops for the
        rest of the step; the engine reports the failure with the step."""
        self.failures.append((self.context.origin.exec_id, exc))
        self.paused = True

    def _run(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call the user's torch function as the program would: traced again
        (it may call back into the user's code: hooks, a custom Function).
        Its outcome is noted in the call's slot (see ``_recover``)."""
        call = self._call
        trace = self._trace
        dispatch = _SubclassDispatch() if self._quieted else None
        if dispatch is not None:
            dispatch.__enter__()
        try:
            if trace is None:
                out = func(*args, **kwargs)
            else:
                _settrace(trace)
                try:
                    out = func(*args, **kwargs)
                finally:
                    _settrace(None)
        except BaseException as exc:
            if call is not None:
                call[2] = exc
            raise
        finally:
            if dispatch is not None:
                dispatch.__exit__(None, None, None)
        if call is not None:
            call[0], call[1] = True, out
        return out

    def _after_call(self, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        if not _grad_enabled() and not self.in_backward:
            self._no_grad_outputs(args, kwargs, out)
        self._tag_made(args, kwargs, out)

    def _tag_made(self, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        """Tag the nodes the call made (``out``: its result, or the tensor it
        changed in place), and note the tensors without requires_grad it
        took (``data`` of ``F.linear(data, w)``) on the statement running
        (``Origin.const_inputs``): which part of a statement drawn in parts
        a const it read went into (see ``grouping._const_part``)."""
        tag = self._tag_outputs(out)
        if tag is None:
            return
        origin = self.context.origin
        noted = origin.const_inputs
        for value in (*args, *kwargs.values()):
            for t in _tensors_in(value):
                if not t.requires_grad:
                    if noted is None:
                        noted = origin.const_inputs = {}
                    noted.setdefault(id(t), tag.node_id)

    def _no_grad_outputs(self, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        """Under no_grad, a call on tensors that require grad makes tensors
        that do not; so does a call on what such a call made in the same
        step: ``drop(proj(x))``'s result is as cut off as ``proj(x)``'s (in
        eval mode the dropout returned its input itself, which was told).
        Keyword arguments count: F.layer_norm passes its weight as one."""
        # (an index or a mask never has a graph: no_grad is not why it has none)
        results = [t for t in _tensors_in(out) if t.is_floating_point() or t.is_complex()]
        if not results:
            return  # (no_grad's own torch._C._set_grad_enabled, an optimizer's reads)
        made = self._no_grad_made
        if any(
            t.requires_grad or (ref := made.get(id(t))) is not None and ref() is t
            for a in (*args, *kwargs.values()) for t in _tensors_in(a)
        ):
            if len(made) > 4096:
                made.clear()  # (forgetting only risks not telling a result made from a forgotten one)
            for t in results:
                ref = weakref.ref(t)
                made[id(t)] = ref
                self.add_record(DetachRecord(self.context.line, "no_grad", ref))

    def _tag_outputs(self, out: Any) -> ag.NodeTag | None:
        """Tag the nodes of the call's result (a tensor, or those of a tuple
        or list); return the first one's tag."""
        first = None
        if isinstance(out, torch.Tensor):
            fn = ag.grad_fn_of(out)
            if fn is not None:
                first = self.registry.tag_graph(fn, self.context.origin, out)
                self._tag_tangent(out)
        elif isinstance(out, (tuple, list)):
            for t in out:
                fn = ag.grad_fn_of(t) if isinstance(t, torch.Tensor) else None
                if fn is not None:
                    tag = self.registry.tag_graph(fn, self.context.origin)
                    first = first or tag
                    self._tag_tangent(t)
        return first

    def _tag_tangent(self, out: torch.Tensor) -> None:
        """A dual tensor's tangent (forward-mode AD) is computed by the op's
        forward-mode formula, which torch runs without calling the mode: its
        nodes, when it has any (it was computed from a tensor that requires
        grad), were made by this op too, not by the line that first reads
        the tangent."""
        tangent = ag.tangent_of(out)
        fn = ag.grad_fn_of(tangent) if tangent is not None else None
        if fn is not None:
            self.registry.tag_graph(fn, self.context.origin, tangent)

    # ---- handlers -----------------------------------------------------------
    def _bind(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The arguments of a call by parameter name ({} when they do not fit)."""
        names = self._signatures.get(func)
        if names is None:
            params = inspect.signature(func).parameters.values()
            positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            simple = all(p.kind in positional or p.kind == inspect.Parameter.KEYWORD_ONLY for p in params)
            names = self._signatures[func] = (
                tuple(p.name for p in params if p.kind in positional) if simple else None,
                frozenset(p.name for p in params),
            )
        order, known = names
        if order is not None and len(args) <= len(order) and known.issuperset(kwargs):
            bound = dict(zip(order, args))
            if not bound.keys() & kwargs.keys():
                bound.update(kwargs)
                return bound
            return {}  # an argument given twice: the call itself raises TypeError
        try:
            return dict(inspect.signature(func).bind(*args, **kwargs).arguments)
        except TypeError:
            return {}

    def _on_backward(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if _under_functorch(sys._getframe(1), self.is_user_file):
            # torch.func (grad, vjp, jacrev...) runs autograd on tensors of a
            # level of its own: what the user gets back has no graph and no
            # .grad was set. Nothing of it is the user's backward.
            return self._run(func, args, kwargs)
        bound = self._bind(func, args, kwargs)
        if func is torch.Tensor.backward:
            roots = _tensors_in(bound.get("self"))
            api = "backward"
        elif func is torch.autograd.grad:
            roots = _tensors_in(bound.get("outputs"))
            api = "autograd.grad"
        else:
            roots = _tensors_in(bound.get("tensors"))
            api = "backward"
        create = bool(bound.get("create_graph") or False)
        retain = bound.get("retain_graph")
        retain = create if retain is None else bool(retain)
        line = self.context.line
        grad_fns = [t.grad_fn for t in roots if t.grad_fn is not None]
        for fn in grad_fns:
            self.registry.tag_graph(fn, self.context.origin)
        before = []
        if api == "backward":
            with ag.hidden_from_user_modes():
                grads = [(leaf, leaf.grad) for leaf in self.registry.reachable_leaves(grad_fns)]
                zeroed = {id(g) for _, g in grads if g is not None and not bool(g.any())}
            for leaf, g in grads:
                # A gradient that was zeroed (x.grad.zero_()) and is then added
                # to is, in effect, set: that is not the accumulation to warn of.
                if g is not None and id(g) in zeroed:
                    g = None
                before.append((weakref.ref(leaf), g, None if g is None else g._version))
        self.backwards_running += 1
        try:
            out = self._run(func, args, kwargs)
        except BaseException as exc:
            self.backwards_running -= 1
            if isinstance(exc, RuntimeError):
                self._explain_backward_error(exc, grad_fns, bound)
                self.error_details.setdefault(id(exc), {})["during"] = api
            # The nodes it ran before the failing one filled .grad as they
            # went: what they filled stays.
            failed = FailedBackwardRecord(line)
            self._grads_written(before, failed, create)
            if failed.first_grads or failed.accumulated:
                self.add_record(failed)
            raise
        self.backwards_running -= 1
        record = BackwardRecord(
            line, api, retain, create, roots=[weakref.ref(t) for t in roots], library=self._library_call(func)[0]
        )
        if not retain:
            record.freed = self.registry.mark_freed(grad_fns, self.context.origin, inputs=self._targets(bound, grad_fns))
        self._grads_written(before, record, create)
        del before
        if api == "autograd.grad":
            record.results = [weakref.ref(t) for t in _tensors_in(out)]
        self.add_record(record)
        self._tag_outputs(out)
        return out

    def _grads_written(
        self, before: list[tuple[weakref.ref[torch.Tensor], Any, int | None]],
        record: BackwardRecord | FailedBackwardRecord, create: bool,
    ) -> None:
        """The leaves whose .grad a backward changed, from their .grad
        ``before`` it (the leaf, its .grad, that .grad's version), into
        ``record``'s ``first_grads`` and ``accumulated``."""
        with ag.hidden_from_user_modes():
            for ref, old, old_version in before:
                reached = ref()
                if reached is None:
                    continue
                new = reached.grad
                if old is None:
                    if new is not None:
                        record.first_grads.append(ref)
                elif new is not old or new._version != old_version:
                    record.accumulated.append(ref)
                if create and new is not None and new.grad_fn is not None:
                    # With create_graph the gradient has a graph, made by this line.
                    self.registry.tag_graph(new.grad_fn, self.context.origin)

    @staticmethod
    def _retains(bound: dict[str, Any]) -> bool:
        retain = bound.get("retain_graph")
        return bool(bound.get("create_graph")) if retain is None else bool(retain)

    @staticmethod
    def _targets(bound: dict[str, Any], grad_fns: list[Any]) -> list[Any]:
        """The nodes a backward with ``inputs`` stops at: their grad_fns, or for
        leaves their AccumulateGrad nodes (found in the graph, not created)."""
        inputs = _tensors_in(bound.get("inputs"))
        if not inputs:
            return []
        leaves = {id(t) for t in inputs if t.grad_fn is None}
        targets = [t.grad_fn for t in inputs if t.grad_fn is not None]
        if leaves:
            for node in ag.iter_nodes(grad_fns):
                for child, _ in node.next_functions:
                    if child is not None and ag.is_accumulate(child) and id(child.variable) in leaves:
                        targets.append(child)
        return targets

    def _explain_backward_error(self, exc: RuntimeError, grad_fns: list[Any], bound: dict[str, Any]) -> None:
        cause = classify_error(exc)
        details: dict[str, Any] = {}
        if cause == "second-backward":
            # The node that stopped it was freed by an earlier call: its tag
            # already says so. Nodes this failed call ran before stopping
            # are freed now too, so mark them after choosing.
            tag = self.registry.first_failing_node(grad_fns, SAVED_FREED, known=True)
            if not self._retains(bound):
                self.registry.mark_freed_before_failure(
                    grad_fns, self.context.origin, tag, inputs=self._targets(bound, grad_fns)
                )
            if tag is not None:
                here = self.context.origin
                details = {
                    "node": tag.node_id,
                    "node_op": tag.op,
                    "node_origin": tag.origin,
                    "freed_by_origin": tag.freed_by,
                    # The same statement freed it on an earlier run: a loop
                    # carries a graph from one iteration into the next.
                    "again": tag.freed_by is not None
                    and (tag.freed_by.line, tag.freed_by.filename) == (here.line, here.filename),
                }
        elif cause == "inplace-modified":
            tag = self.registry.first_failing_node(grad_fns, SAVED_MODIFIED)
            if not self._retains(bound):
                # The nodes it ran before the one that failed freed their saved tensors.
                self.registry.mark_freed_before_failure(
                    grad_fns, self.context.origin, tag, inputs=self._targets(bound, grad_fns)
                )
            if tag is not None:
                details = {"node": tag.node_id, "node_op": tag.op, "node_origin": tag.origin}
            details.update(self._modified_at(str(exc)))
            changed = details.get("modified_at_origin")
            if tag is not None and changed is tag.origin:
                # One statement made the node and changed what it saved (an
                # nn.ReLU(inplace=True) after an nn.Sigmoid in one model call):
                # said once, not as two places that happen to be one.
                details["changed_in"] = "backward-statement" if changed is self.context.origin else "same-statement"
            elif tag is not None and changed is not None and (changed.line, changed.filename) == (
                tag.origin.line, tag.origin.filename
            ):
                details["changed_in"] = "later-run"  # (a loop: the same line, not the same time)
        if details:
            self.error_details[id(exc)] = details

    def _modified_at(self, message: str) -> dict[str, Any]:
        """The in-place op that most likely bumped the version torch complains
        about: the latest one that left a tensor of that shape at that
        version, preferably one of an output of the op torch names (which,
        with its output number, is told as ``saved_output_of``,
        ``saved_output_nr``); the library module that made it, if one did."""
        match = _VERSION_RE.search(message)
        version = int(match.group(1)) if match else None
        found = _SHAPE_RE.search(message)
        shape = tuple(int(d) for d in found.group(1).replace(" ", "").split(",") if d) if found else None
        output = _OUTPUT_OF_RE.search(message)
        output_of = _BACKWARD_SUFFIX.sub("", output.group(2)) if output else None
        details: dict[str, Any] = {}
        candidates = [
            rec for rec in reversed(self.inplace_history)
            if (version is None or rec.version == version) and (shape is None or rec.shape == shape)
        ]
        of_output = [rec for rec in candidates if rec.before_op and _BACKWARD_SUFFIX.sub("", rec.before_op) == output_of]
        if output is not None and of_output:
            # Told only when the op changed a tensor the graph shows as that
            # op's output: torch names what it tracks a view by too
            # ("output 0 of AsStrided" for the weight_hh.t() an RNNCell's
            # addmm saved, which the graph draws as TBackward0 of the parameter).
            details.update(saved_output_of=output_of, saved_output_nr=int(output.group(1)))
        for rec in of_output[:1] or candidates[:1]:
            details.update(modified_at_origin=rec.origin, modified_op=rec.op)
            if rec.module is not None:
                details["modified_by"] = rec.module
        return details

    def _library_call(self, func: Any = None) -> tuple[str | None, str]:
        """Which library function the user's line called to get here, if the
        torch call did not come from the user's own code: ("SGD.step",
        "optimizer"), ("BatchNorm1d.__init__", "setup"), or (None, "").
        ``func``: the torch function observed, whose own frames are not a
        library function the user called (``loss.backward()`` runs
        ``Tensor.backward``'s Python code: the user called it, nothing else)."""
        frame = _caller_frame(func)
        last = self._last_library
        if last is not None and last[0] is frame:
            return last[1]  # the same running frame: the same frames above it
        innermost = frame
        chain: list[types.FrameType] = []  # library frames, innermost first
        setup = False
        while frame is not None:
            filename = frame.f_code.co_filename
            if is_tutor_file(filename) or filename.endswith(OVERRIDES_FILE):
                frame = frame.f_back
                continue
            if self.is_user_file(filename):
                break
            chain.append(frame)
            setup = setup or frame.f_code.co_name in _SETUP_FUNCTIONS
            frame = frame.f_back
        if not chain or frame is None:
            return None, ""
        # The function the user called, past the wrappers around it
        # (model(x) -> _call_impl -> forward; opt.step() -> wrapper -> step).
        entry = next((f for f in reversed(chain) if f.f_code.co_name not in _WRAPPERS), chain[-1])
        owner = entry.f_locals.get("self")
        where = f"{type(owner).__name__}.{entry.f_code.co_name}" if owner is not None else entry.f_code.co_name
        found: tuple[str | None, str] = (where, "setup" if setup else "optimizer" if isinstance(owner, torch.optim.Optimizer) else "other")
        if innermost is not None:
            self._last_library = (innermost, found)
        return found

    def _on_inplace(self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if args and isinstance(args[0], (list, tuple)) and name.startswith("_foreach_"):
            return self._on_foreach_inplace(func, name, args, kwargs)
        target = _inplace_target(args, kwargs)
        before = target.grad_fn if target is not None else None
        if before is not None:
            self.registry.tag_graph(before, self.context.origin)
        base = _view_base(target) if target is not None and before is not None else None
        of = base() if base is not None else None
        base_before = of.grad_fn if of is not None else None
        del of
        try:
            out = self._run(func, args, kwargs)
        except RuntimeError as exc:
            if target is not None:
                self.error_details[id(exc)] = {"op": name, "tensor_ref": weakref.ref(target)}
            raise
        self.registry.inplace_epoch += 1
        if target is not None:
            # A tensor this very statement made, changed before the statement
            # handed it over (nn.ReLU(inplace=True) inside model(x)): a step
            # of its computing, not a change of anything the user had.
            tag = self.registry.tag_of(before) if before is not None else None
            made_here = tag is not None and tag.origin is self.context.origin
            if made_here and base is not None:
                # A view the statement made, of a tensor it did not make
                # (data[0:1].add_(5)): what changed is that tensor.
                base_tag = self.registry.tag_of(base_before) if base_before is not None else None
                made_here = base_tag is not None and base_tag.origin is self.context.origin
            elif base is None:
                base = _view_base(target)
            library, kind = self._library_call()
            data_of = self._data_source(target)
            if base is None:
                base = self._detached_from(target)
            else:
                base, of_data = self._view_source(target, base)
                # (gradcheck changes its inputs' entries through views of
                # their .data, and sets them back: not told as their change)
                if data_of is None and library is None:
                    data_of = of_data
            rec = InplaceRecord(
                self.context.line,
                self.context.origin,
                name,
                weakref.ref(target),
                target._version,
                tuple(target.shape),
                data_of,
                library,
                kind,
                base,
                tag.op if tag is not None else None,
                _inplace_module(func) if library is not None and name.endswith("(inplace=True)") else None,
            )
            if not made_here:
                self.add_record(rec)
            self.inplace_history.append(rec)
            if len(self.inplace_history) > 256:
                del self.inplace_history[:128]
            self._tag_made(args, kwargs, target)
            after = ag.grad_fn_of(target)
            if before is not None and after is not None and after is not before:
                # The same tensor, a new node: the statement view draws them as one.
                tag = self.registry.tag_of(after)
                if tag is not None and tag.replaces is None:
                    tag.replaces = self.registry.tag_of(before)
        return out

    def _on_running_stats(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """F.batch_norm, F.instance_norm: in training (in instance_norm, when
        it uses the input's statistics) they update the running mean and
        variance they are given, in place, inside one C call the mode does
        not see and without bumping their versions: told by the arguments.
        Told too when the call ends in checkpoint's early stop of a segment
        computed again in a backward: the hook that stops it runs as the
        op's node saves its tensors, after the op ran."""
        try:
            out = call_warning_at_caller(func, args, kwargs, self._run)
        except Exception as exc:
            if type(exc).__name__ == "_StopRecomputationError":
                self._running_stats_updated(func, args, kwargs)
            raise
        self._after_call(args, kwargs, out)
        self._running_stats_updated(func, args, kwargs)
        return out

    def _running_stats_updated(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        flag = "training" if func is torch.nn.functional.batch_norm else "use_input_stats"
        if _arg(args, kwargs, 5, flag) or (flag == "use_input_stats" and len(args) <= 5 and flag not in kwargs):
            stats = [_arg(args, kwargs, 1, "running_mean"), _arg(args, kwargs, 2, "running_var")]
            changed = [t for t in stats if isinstance(t, torch.Tensor)]
            if changed:
                self.registry.inplace_epoch += 1
                library, kind = self._library_call()
                for t in changed:
                    self.add_record(InplaceRecord(
                        self.context.line, self.context.origin, func.__name__, weakref.ref(t), t._version,
                        tuple(t.shape), None, library, kind,
                    ))

    def _on_detach(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        source = args[0] if args and isinstance(args[0], torch.Tensor) else None
        had_grad = source is not None and source.requires_grad
        out = self._run(func, args, kwargs)
        if func == _DATA_GET and source is not None and isinstance(out, torch.Tensor):
            self._remember_data_view(out, source)
        elif func is torch.Tensor.detach and source is not None and isinstance(out, torch.Tensor):
            self._remember_view(self._detached, out, source)
        if source is not None and had_grad and isinstance(out, torch.Tensor):
            how = "data" if func == _DATA_GET else getattr(func, "__name__", "detach")
            library = self._library_call()[0] if how == "detach" else None
            self.add_record(
                DetachRecord(self.context.line, how, weakref.ref(out), weakref.ref(source), library)
            )
        return out

    def _on_foreach_inplace(self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``torch._foreach_add_(tensors, ...)``, as optimizers use: one change per tensor."""
        out = self._run(func, args, kwargs)
        self.registry.inplace_epoch += 1
        library, kind = self._library_call()
        op = name.removeprefix("_foreach_")
        for target in args[0]:
            if isinstance(target, torch.Tensor):
                self.add_record(InplaceRecord(
                    self.context.line, self.context.origin, op, weakref.ref(target), target._version,
                    tuple(target.shape), None, library, kind,
                ))
        return out

    def _remember_data_view(self, view: torch.Tensor, source: torch.Tensor) -> None:
        self._remember_view(self._data_views, view, source)

    @staticmethod
    def _remember_view(
        views: dict[int, tuple[weakref.ref[torch.Tensor], weakref.ref[torch.Tensor]]],
        view: torch.Tensor, source: torch.Tensor,
    ) -> None:
        key = id(view)

        def forget(_ref: object, key: int = key) -> None:
            entry = views.get(key)
            if entry is not None and entry[0]() is None:
                del views[key]

        views[key] = (weakref.ref(view, forget), weakref.ref(source))

    def _is_data_of(self, view: torch.Tensor, source: torch.Tensor) -> bool:
        """Is ``view`` what ``source.data`` gave, still on the same memory?"""
        found = self._data_source(view)
        return found is not None and found() is source

    def _data_source(self, tensor: torch.Tensor) -> weakref.ref[torch.Tensor] | None:
        """The tensor whose ``.data`` ``tensor`` is, weakly, while they still
        share their memory (``p.data = ...`` gives ``p`` other memory)."""
        entry = self._data_views.get(id(tensor))
        if entry is None or entry[0]() is not tensor:
            return None
        source = entry[1]()
        return entry[1] if source is not None and _same_memory(tensor, source) else None

    def _view_source(
        self, view: torch.Tensor, base: weakref.ref[torch.Tensor],
    ) -> tuple[weakref.ref[torch.Tensor] | None, weakref.ref[torch.Tensor] | None]:
        """What a change of ``view``, a view of ``base``'s tensor, changed
        besides itself: ``base``, or the tensor ``base`` was detached from
        (``v = c.detach()[0]`` changes ``c``); nothing when they no longer
        share memory (``c.data = ...`` after ``v = c[0]``). And the tensor
        whose ``.data`` ``base`` is (``v = c.data[0]``), if any."""
        of = base()
        if of is None or not _same_storage(view, of):
            return None, None
        detached_from = self._detached_from(of)
        return base if detached_from is None else detached_from, self._data_source(of)

    def _detached_from(self, tensor: torch.Tensor) -> weakref.ref[torch.Tensor] | None:
        """What ``tensor`` was detached from, weakly, while they still share
        their memory (``p.data = ...`` gives ``p`` other memory): the first
        tensor of a chain of ``detach()`` calls (``ema.state_dict()`` detaches
        each parameter; ``v.detach()`` of such a value is the parameter's too).
        None if it is no such tensor."""
        found: weakref.ref[torch.Tensor] | None = None
        seen: set[int] = set()
        while id(tensor) not in seen:
            seen.add(id(tensor))
            entry = self._detached.get(id(tensor))
            if entry is None or entry[0]() is not tensor:
                break
            source = entry[1]()
            if source is None or not _same_memory(tensor, source):
                break
            found, tensor = entry[1], source
        return found

    def _on_data_set(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        target = args[0] if args and isinstance(args[0], torch.Tensor) else None
        value = args[1] if len(args) > 1 else None
        # ``p.data += x`` is ``tmp = p.data; tmp += x; p.data = tmp``: the
        # change is the in-place op on ``tmp`` (recorded as such); handing
        # ``p`` its own data back changes nothing.
        write_back = target is not None and isinstance(value, torch.Tensor) and self._is_data_of(value, target)
        out = self._run(func, args, kwargs)
        if target is not None and not write_back:
            ref = weakref.ref(target)
            library, kind = self._library_call()
            self.add_record(InplaceRecord(
                self.context.line, self.context.origin, "data =", ref, target._version, tuple(target.shape), ref,
                library, kind,
            ))
        return out

    def _on_grad_set(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = self._run(func, args, kwargs)
        target = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if target is not None:
            value = args[1] if len(args) > 1 else None
            self.add_record(GradSetRecord(self.context.line, weakref.ref(target), value is None, self._library_call()[0]))
        return out

    def _on_requires_grad(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        target = args[0] if args and isinstance(args[0], torch.Tensor) else None
        before = target.requires_grad if target is not None else None
        out = self._run(func, args, kwargs)
        if target is not None and target.requires_grad != before:
            library, _ = self._library_call()
            # Library code switches the flag of tensors it is making (a
            # module's parameters, torch.load, deepcopy): only a module's
            # requires_grad_() is the user's asking.
            if library is None or library.endswith(".requires_grad_"):
                self.add_record(RequiresGradRecord(self.context.line, weakref.ref(target), target.requires_grad, library))
        return out

    def _on_retain_grad(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = self._run(func, args, kwargs)
        if args and isinstance(args[0], torch.Tensor):
            self.add_record(RetainGradRecord(self.context.line, weakref.ref(args[0])))
        return out

    def _on_grad_read(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        t = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if t is not None and not t.is_leaf and not t.retains_grad:
            self.add_record(WarningRecord(self.context.line, "non-leaf-grad", weakref.ref(t)))
            return call_warning_at_caller(func, args, kwargs, self._run)
        return self._run(func, args, kwargs)

    def add_record(self, record: Any, exec_id: int | None = None) -> None:
        """Keep ``record`` for the statement execution it belongs to (the one
        running now, unless given)."""
        self.records.append(record)
        self._record_execs.append(self.context.origin.exec_id if exec_id is None else exec_id)

    def take_records(self, exec_id: int | None = None) -> list[Any]:
        """The records of statement execution ``exec_id`` (and any of no known
        statement); all of them when None. Records of a statement still
        running further up (a caller's line whose library call ran the
        user's function) wait for that statement to finish."""
        self._last_library = None  # (no frame is held past a step)
        self._no_grad_made.clear()
        if exec_id is None:
            records, self.records, self._record_execs = self.records, [], []
            return records
        taken: list[Any] = []
        kept: list[Any] = []
        kept_execs: list[int] = []
        for record, owner in zip(self.records, self._record_execs):
            if owner in (exec_id, 0):
                taken.append(record)
            else:
                kept.append(record)
                kept_execs.append(owner)
        self.records, self._record_execs = kept, kept_execs
        return taken
