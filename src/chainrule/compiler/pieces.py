"""Replaying a record in pieces: a call whose Python reads values (``.item()``, ``print``,
``if loss < best:``) runs its Python again, while its tensor work comes from the program.

A record that went on past graph breaks (`chainrule.compiler.tracer`) has "read" equations
where the Python needed values and after each whole call; its replay is a generator that
stops at each. `Pieces`, the engine's observer for one call, runs the function's Python and
matches what it does against the record's events, one by one: an op with the same row on
the same Vars and equal literals gets a *pending* tensor (its array is a placeholder of the
right shape and dtype); a write or a ``.grad`` set is noted; a backward pass gives the
leaves pending gradients; a module whose ``forward`` only ran ops when recorded is not run
at all, its results pending at once. At a read (or a whole call), the program runs on to
its next stop and hands over the arrays of the pending tensors the Python still holds.
Every match is a guard on what the Python decided: the first event that differs from the
record (another branch, another number) makes the call go on eagerly from there, after the
events matched since the last stop have run eagerly, in order, on the real arrays.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import Any

import numpy as np

from .. import dispatch, observe
from .._tensor import Tensor
from ..autograd import run_backward
from ..errors import GraphError
from ..graph import Node, user_line
from ..numpy_warnings import restore, silence
from ..observe import PLAIN, Observer
from ..signatures import TRANSLATED, translate
from .program import Var, map_structure
from .tracer import Event, _Slot

_new = object.__new__


class Unrunnable(Node):
    """The ``grad_fn`` of a tensor a compiled call gave back whose gradient history the
    record does not hold: backward through it raises `GraphError` with ``message`` (the
    op's name shown as eager's node shows it: ``<SumBackward>``)."""

    __slots__ = ("op", "label")

    #: Why the backward cannot run, after the op's name.
    message = ""

    def __init__(self, op, meta: tuple) -> None:
        super().__init__((), (meta,), ())
        self.op = getattr(op, "name", op)
        self.label = getattr(op, "backward_name", op)

    @property
    def name(self) -> str:
        return self.op

    def __repr__(self) -> str:
        return f"<{self.label}>"

    def propagate(self, grads: list, create_graph: bool, release: bool) -> list:
        raise GraphError(f"{self.op}: {self.message}")


class Pending(Unrunnable):
    """The ``grad_fn`` of a tensor a replay in pieces computed: its gradient history stayed
    inside the compiled program, which runs the backward passes the call itself makes."""

    __slots__ = ()

    message = (
        "this tensor was computed by a compiled call replayed in pieces (around a graph "
        "break), whose gradient history stays inside the compiled program; backward through "
        "it is possible only inside the call, as it was recorded. Call the function "
        "uncompiled (or compile the code without the .item()/print)"
    )


class Pieces(Observer):
    """One call of a record replayed in pieces (see the module's docstring). ``diverged``
    is why the call went on eagerly (None when it did not)."""

    def __init__(self, record, tensors: list[Tensor]) -> None:
        super().__init__()
        self.events: list[Event] = record.events
        self._literals = record.literals
        self._spare = record.placeholders
        self.pos = 0
        self.diverged: str | None = None
        self._thread = threading.get_ident()
        self._run = record.replay(tensors)  # a generator: nothing runs before the first stop
        self._mailbox = record.mailbox
        self._mailbox.clear()  # what a call that went another way left there
        # id(array) -> (its Vars, the array, its pending Tensor or None). The arrays stay
        # referenced, so that no new array can take an old one's id during the call.
        self._known: dict[int, tuple] = {}
        for var, tensor in zip(record.program.inputs, tensors):
            self._known[id(tensor._array)] = ([var], tensor._array, None)
        self._pending: list[tuple] = []  # (weakref to a pending Tensor or array, its Var)
        self._placeholders: set[int] = set()  # ids of the pending arrays made since the stop
        # What was matched, to run eagerly if the call diverges: the events since the last stop,
        # and before them those since the last whole call that can run again (ops, writes to
        # their own results), so that a divergence after a read still gives their tensors an
        # eager graph. Tensors the journal made are named by Var (`_Ref`), never held.
        self._journal: list[tuple] = []
        self._made: set[int] = set()  # id(Var) of what the journal's ops made
        self._sealed = False  # the journal holds effects that must not run twice
        self._flushed = 0  # how much of the journal the program has run already
        self._read: dict[int, tuple] = {}  # id -> (a tensor the journal reads, its version)
        self._grads_before: list[tuple] = []  # (leaf, its .grad before a pending backward)
        self._inplace = 0  # inside an in-place op: its own op and writes go unjournaled

    # Running a call.

    def call(self, fn, args: tuple, kwargs: dict) -> Any:
        """``fn(*args, **kwargs)`` with this replay watching; its result, as eager mode's."""
        self.attach()
        try:
            result = fn(*args, **kwargs)
            if self.diverged is None:
                self._expect("read")
                if self.diverged is None:
                    self._stop()
                    self._run.close()
        except BaseException:
            if self.diverged is None:
                self._diverge("the function raised")
            raise
        finally:
            self.detach()
        return result

    # Matching.

    def recording(self) -> bool:
        """True while this thread's Python is matched: the engine then takes the paths it took
        while the record was made (the losses' composed rows, a clone for a saved array)."""
        return observe.current is self and threading.get_ident() == self._thread

    def _expect(self, kind: str, key: Any = None) -> Event | None:
        """The next event, if it is of ``kind`` (and ``key``); else the call diverges."""
        if self.pos >= len(self.events):
            self._diverge(f"{kind} after the record's end")
            return None
        event = self.events[self.pos]
        if event.kind != kind or (
            key is not None and event.key is not key and not (type(key) is str and event.key == key)
        ):
            recorded = _label(event.kind, event.key)
            self._diverge(f"{_label(kind, key)} where the record has {recorded}")
            return None
        return event

    def _is(self, value: Any, expected: Any) -> bool:
        """Whether ``value`` (an argument now) is what the record had: the same Var for a
        tensor or array, an equal literal otherwise."""
        if isinstance(expected, Var):
            if type(expected.source) is tuple and expected.source[0] == "literal":
                if type(value) is not expected.value:  # a number the program takes each call
                    return False
                self._literals[expected.source[1]] = value
                return True
            if isinstance(value, Tensor):
                array = value._array
            elif isinstance(value, np.ndarray):
                array = value
            else:
                return False
            known = self._known.get(id(array))
            if known is not None:
                return expected in known[0]
            if expected.kind == "state":  # (no source: no equation reads it, any tensor will do)
                return expected.source is None or array is expected.source._array
            if expected.kind == "const":
                return expected.value is None or _same(array, expected.value)
            return False
        if type(expected) in _PLAIN:  # a literal, the usual case
            return type(value) is type(expected) and (
                value == expected or (value != value and expected != expected)
            )
        if type(expected) is dict:
            return (
                type(value) is dict
                and value.keys() == expected.keys()
                and all(self._is(value[k], e) for k, e in expected.items())
            )
        if type(expected) in (tuple, list):
            return (
                type(value) is type(expected)
                and len(value) == len(expected)
                and all(self._is(v, e) for v, e in zip(value, expected))
            )
        if isinstance(value, (Tensor, np.ndarray)):
            return False
        if type(value) is not type(expected):
            return False
        if type(value) is float and value != value:
            return expected != expected
        try:
            return bool(value == expected)
        except (TypeError, ValueError):
            return value is expected

    def _pending_tensor(
        self, var: Var, grad: bool, op: Any, strides: tuple | None = None
    ) -> Tensor:
        array = self._spare.get(id(var))
        if array is None:  # made once per record: every pending tensor gets its array later
            array = self._spare[id(var)] = _placeholder(var, strides)
        tensor = _new(Tensor)
        tensor._array = array
        tensor._grad = tensor._hooks = tensor._tangent = tensor._counter = tensor._view = None
        tensor._output_nr = 0
        tensor._requires_grad = grad
        tensor._grad_fn = _pending_node(op, var) if grad else None
        ref = weakref.ref(tensor)
        self._known[id(array)] = ([var], array, ref)
        self._placeholders.add(id(array))
        self._pending.append((ref, var))
        return tensor

    # What the engine reports.

    def run_op(self, op, args: tuple, params: dict):
        if not self.recording():
            return PLAIN
        event = self._expect("op", op)
        if event is None:
            return PLAIN
        if params and not TRANSLATED.isdisjoint(params):
            params = translate(op.name, params)
        # Each argument against the record's, and the journal's copy of it, in one pass.
        ins, known, made = event.ins, self._known, self._made
        spec: list = []
        same = len(args) == len(ins)
        if same:
            for a, e in zip(args, ins):
                kind = type(a)
                if kind is Tensor:  # the usual case: a tensor the record named
                    entry = known.get(id(a._array))
                    if entry is not None and e in entry[0]:
                        if id(e) in made:
                            spec.append(_Ref(e, entry[2] or weakref.ref(a)))
                        else:
                            spec.append(self._held(a))
                        continue
                elif kind in _PLAIN and kind is type(e) and a == e:
                    spec.append(a)
                    continue
                if not self._is(a, e):
                    same = False
                    break
                spec.append(self._spec(a))
        info = event.info
        plain = info.get("plain")
        if plain is None:  # parameters that are literals alone (dims, shapes) compare as a dict
            plain = info["plain"] = all(_literal(v) for v in event.params.values())
        if not (
            same
            and (
                not (params or event.params)
                or (
                    params == event.params  # the same literals (a tensor among them: not)
                    if plain and not any(isinstance(v, Tensor) for v in params.values())
                    else self._is(params, event.params)
                )
            )
        ):
            self._diverge(f"{op.name} with other arguments than the record's")
            return PLAIN
        out = self._pending_tensor(event.outs[0], info["grad"], op, info["strides"])
        if info["view"]:
            out._counter, out._view = dispatch.view_of(op, args, params)
        if not self._inplace:
            made_ref = self._pending[-1][0]  # the weak reference `_pending_tensor` made
            entry = ("op", op, tuple(spec), params if plain else self._spec(params))
            self._journal.append((*entry, event.outs[0], made_ref))
            made.add(id(event.outs[0]))
        self.pos += 1
        return out

    def run_whole(self, fn, args: tuple, kwargs: dict, pure: bool = False):
        if not self.recording():
            return fn(*args, **kwargs)
        ahead = self.events[self.pos] if self.pos < len(self.events) else None
        if pure and ahead is not None and ahead.kind == "read" and ahead.key == _name(fn):
            self._stop()  # the values it reads, first (a pure call run by the Python)
        event = self._expect("call", fn)
        if event is None or not self._fits(event.info["template"], (args, kwargs), event.ins):
            if event is not None:
                self._diverge(f"{getattr(fn, '__qualname__', fn)} with other arguments")
            return fn(*args, **kwargs)
        if pure and not event.info["python"]:  # pending, as an op's results; it may run again
            result = self._results(event, _label("call", fn))
            made = tuple(weakref.ref(r) for r in _flat(result))
            self._journal.append(("call", fn, self._spec(args), self._spec(kwargs), event.outs,
                                  made))  # fmt: skip
            self._made.update(id(var) for var in event.outs)
            self.pos += 1
            return result
        numbers = event.info.get("numbers")
        if numbers is not None:  # an optimizer's step: its numbers now, its update pending
            optimizer = event.info["optimizer"]
            before = optimizer.numbers_state()
            self.detach()
            try:
                self._mailbox.append(numbers())
            finally:
                self.attach()
            self._journal.append(("update", optimizer, before))
            self._sealed = True  # once the program ran the update, it must not run again
            self.pos += 1
            return None
        if event.info.get("python_only"):  # numbers in Python: it runs now, no stop
            self.detach()
            try:
                result = fn(*args, **kwargs)
            finally:
                self.attach()
            self.pos += 1
            return result
        if pure:  # it gives the Python more than arrays: it runs now, as in eager mode
            if self._reads_pending((args, kwargs)):
                self._diverge(f"{_label('call', fn)} on values not computed yet")
                return fn(*args, **kwargs)
            self.detach()
            try:
                result = fn(*args, **kwargs)
            finally:
                self.attach()
            for var, made in zip(event.outs, _flat(result)):
                array = made._array if isinstance(made, Tensor) else made
                self._known[id(array)] = ([var], array, None)
            self.pos += 1
            return result
        result = self._results(event, _label("call", fn))
        self.pos += 1
        self._expect("read")
        if self.diverged is None:  # the program runs on through the call itself
            self._stop()
        return result

    def _reads_pending(self, value: Any) -> bool:
        """Whether ``value`` holds a tensor or array whose values the program has not given
        yet (made since the last stop)."""
        if isinstance(value, (Tensor, np.ndarray)):
            return id(value._array if isinstance(value, Tensor) else value) in self._placeholders
        if type(value) in (tuple, list):
            return any(self._reads_pending(v) for v in value)
        if type(value) is dict:
            return any(self._reads_pending(v) for v in value.values())
        return False

    def run_module(self, module, args: tuple, kwargs: dict):
        """A module's forward: skipped, its results pending, where the record says it may
        be and the arguments are the record's; else run, its ops matched one by one."""
        if not self.recording():
            return module.forward(*args, **kwargs)
        event = self._expect("module", module)
        if event is None:
            return module.forward(*args, **kwargs)
        self.pos += 1
        info = event.info
        if not info["skip"] or not self._fits(info["template"], (args, kwargs), event.ins):
            return module.forward(*args, **kwargs)
        result = self._results(event, f"{type(module).__name__}.forward")
        made = tuple(weakref.ref(r) for r in _flat(result))
        self._journal.append(("call", module.forward, self._spec(args), self._spec(kwargs),
                              event.outs, made))  # fmt: skip
        self._made.update(id(var) for var in event.outs)
        self._sealed |= info["state"]
        self.pos += info["count"]
        return result

    def _results(self, event: Event, name: str) -> Any:
        """What a whole call returns, pending, laid out as the record's (one array returned
        twice, as the record's was, is one pending array)."""
        info, made = event.info, []

        def build(shape: Any) -> Any:
            if shape in ("tensor", "array"):
                i = len(made)
                var, first = event.outs[i], info["alias"][i]
                if first != i:
                    same = made[first]
                    self._known[id(same._array if isinstance(same, Tensor) else same)][0].append(
                        var
                    )
                elif shape == "tensor":
                    strides = info.get("strides")
                    same = self._pending_tensor(var, info["grad"][i], name,
                                                strides[i] if strides else None)  # fmt: skip
                else:
                    same = np.empty(var.shape, var.dtype)
                    self._known[id(same)] = ([var], same, None)
                    self._placeholders.add(id(same))
                    self._pending.append((weakref.ref(same), var))
                made.append(same)
                return same
            if type(shape) is tuple:
                return tuple(build(part) for part in shape)
            return None

        result = build(info["shape"])
        made.clear()  # (``build`` refers to itself: the list must not keep the results alive)
        return result

    def _fits(self, template: Any, value: Any, slots: tuple) -> bool:
        if value is template:  # a parameter given itself
            return True
        if isinstance(template, _Slot):
            return self._is(value, slots[template.index])
        if type(template) in (tuple, list):
            return (
                type(value) in (tuple, list)
                and len(value) == len(template)
                and all(self._fits(t, v, slots) for t, v in zip(template, value))
            )
        if type(template) is dict:
            return (
                type(value) is dict
                and value.keys() == template.keys()
                and all(self._fits(template[k], value[k], slots) for k in template)
            )
        if isinstance(value, (Tensor, np.ndarray)):
            return False
        return value is template or self._is(value, template)

    def write(self, target: np.ndarray, source: np.ndarray) -> bool:
        if not self.recording():
            return False
        event = self._expect("write")
        if event is None:
            return False
        if not (self._is(target, event.ins[0]) and self._is(source, event.ins[1])):
            self._diverge("an in-place write to other tensors than the record's")
            return False
        target_spec = self._spec(target)
        self._sealed |= not isinstance(target_spec, _Ref)  # a write to state: not twice
        if not self._inplace:
            self._journal.append(("write", target_spec, self._spec(source)))
        self.pos += 1
        return True

    def inplace_begins(self, write, tensor, op, other, name: str) -> None:
        if not self.recording():
            return
        event = self._expect("inplace", name)
        if event is None:
            return
        if not (self._is(tensor, event.ins[0]) and self._is(other, event.ins[1])):
            self._diverge(f"{name} on other tensors than the record's")
            return
        if not self._inplace:
            other = self._spec(other)
            self._journal.append(("inplace", write, self._spec(tensor), op, other, name))
        self._inplace += 1
        self.pos += 1

    def inplace_ends(self) -> None:
        if self._inplace:
            self._inplace -= 1

    def grad_assigned(self, tensor, value) -> None:
        if not self.recording():
            return
        event = self._expect("grad", tensor)
        if event is None:
            return
        if len(event.ins) != (value is not None) or (
            value is not None and not self._is(value, event.ins[0])
        ):
            self._diverge(".grad set to another tensor than the record's")
            return
        # Setting .grad again gives the same .grad (what else changes it, a backward pass,
        # seals the journal): this may run again.
        self._journal.append(("grad", tensor, self._spec(value)))
        self.pos += 1

    def run_backward(self, outputs, seeds, retain_graph: bool, create_graph: bool, inputs):
        if not self.recording():
            return PLAIN
        event = self._expect("backward")
        if event is None:
            return PLAIN
        info = event.info
        if not (
            inputs is None
            and (retain_graph, create_graph) == (info["retain"], info["create"])
            and self._is(tuple(outputs), event.ins)
            and len(seeds) == len(info["seeds"])
            and all(
                (g is None) == (e is None) and (g is None or self._is(g, e))
                for g, e in zip(seeds, info["seeds"])
            )
        ):
            self._diverge("a backward pass from other tensors than the record's")
            return PLAIN
        grads = []
        for leaf, var in info["leaves"]:
            self._grads_before.append((leaf, leaf._grad))
            leaf._grad = self._pending_tensor(var, False, "grad")
            grads.append((leaf, weakref.ref(leaf._grad)))
        self._journal.append(("backward", self._spec(tuple(outputs)), self._spec(tuple(seeds)),
                              retain_graph, create_graph, grads))  # fmt: skip
        self._sealed = True
        self.pos += 1
        return None

    def values_read(self, what: str) -> None:
        if not self.recording():
            return
        event = self._expect("read", what)
        if event is not None:
            self._stop()

    def data_read(self, tensor, copy) -> None:
        self.shared(tensor, copy)

    def shared(self, tensor, copy) -> None:
        """A tensor over a pending tensor's placeholder (``.data``, ``detach()``): pending too."""
        if not self.recording():
            return
        known = self._known.get(id(copy._array))
        source = known[2]() if known is not None and known[2] is not None else None
        if source is not None:  # a pending tensor's: pending too
            self._pending.append((weakref.ref(copy), known[0][0]))
            self._journal.append(("data", known[0][0], weakref.ref(copy)))

    def data_assigned(self, tensor) -> None:
        if self.recording():
            self._diverge("assigning a tensor's .data")

    def run_function(self, cls, args: tuple, kwargs: dict):
        if self.recording():
            self._diverge(f"{cls.__name__} (a Function subclass)")
        return PLAIN

    # Stops.

    def _stop(self) -> None:
        """The program runs on to its next stop (the read the event at ``pos`` is); the
        pending tensors the Python still holds get their arrays."""
        event = self.events[self.pos]
        if self._sealed:  # effects ran: the journal cannot run again
            self._journal.clear()
            self._made.clear()
            self._read.clear()
            self._sealed = False
        self._flushed = len(self._journal)
        for leaf, before in reversed(self._grads_before):
            leaf._grad = before  # the program's own "grad" equations set .grad, in order
        self._grads_before.clear()
        quiet = silence()  # NumPy's RuntimeWarnings silent, as in eager (numpy_warnings)
        self.detach()  # the program's whole calls run unwatched, as in a whole replay
        try:
            arrays = next(self._run)
        finally:
            self.attach()
            restore(quiet)
        given = {id(var): array for var, array in zip(event.ins, arrays)}
        for ref, var in self._pending:
            held = ref()
            # A pending array (a whole call's) is also held by `_known`, this loop and
            # getrefcount: the Python holds it only if something more does.
            if held is None or (type(held) is np.ndarray and sys.getrefcount(held) <= 3):
                continue
            array = given.get(id(var))
            if array is None:
                raise GraphError(
                    f"compile: at {user_line()}, the Python holds a tensor that it did not "
                    "hold when the call was recorded, and the compiled program did not keep "
                    "its values; run this function uncompiled"
                )
            if isinstance(held, Tensor):
                held._array = array
            else:
                np.copyto(held, array)
            known = self._known.get(id(array))
            if known is not None and known[1] is array:
                known[0].append(var)  # one array for two Vars (a pass found them equal)
            else:
                self._known[id(array)] = ([var], array, None)
        self._pending.clear()
        self._placeholders.clear()
        self.pos += 1

    def _diverge(self, what: str) -> None:
        """The Python did ``what`` where the record holds something else: what was matched
        since the last stop runs eagerly, in order, and the call goes on eagerly."""
        if self.diverged is not None:
            return
        self.diverged = f"{what}, at {user_line()}"
        self.detach()
        self._run.close()
        for leaf, before in reversed(self._grads_before):
            leaf._grad = before
        self._grads_before.clear()
        journal, self._journal = self._journal, []
        # What the program ran already runs again only if nothing it read changed since (a
        # whole call such as zero_grad between forward and backward changes nothing it read;
        # an optimizer's step would): its tensors then get an eager graph.
        if any(t._version_counter.value != v for t, v in self._read.values()):
            journal = journal[self._flushed :]
        env: dict[int, Tensor] = {}  # id(Var) -> its tensor, run eagerly now
        for entry in journal:
            kind = entry[0]
            if kind == "op":
                _, op, args, params, var, ref = entry
                result = dispatch.apply_op(op, *_resolve(args, env), **_resolve(params, env))
                held = ref()
                if held is not None:  # the Python holds the pending tensor: it becomes this
                    _transplant(result, held)
                    result = held
                env[id(var)] = result
            elif kind == "call":  # a pure call or a module's forward again, into its results
                _, fn, args, kwargs, outs, made = entry
                again = _flat(fn(*_resolve(args, env), **_resolve(kwargs, env)))
                for var, ref, value in zip(outs, made, again):
                    held = ref()
                    if isinstance(held, Tensor):
                        _transplant(value, held)
                        value = held
                    elif held is not None:
                        np.copyto(held, value)
                        value = held
                    env[id(var)] = value
            elif kind == "inplace":  # the in-place op again, whole: its history as eager's
                _, write, tensor, op, other, name = entry
                write(_resolve(tensor, env), op, _resolve(other, env), name)
            elif kind == "write":
                _, target, source = entry
                target, source = _resolve(target, env), _resolve(source, env)
                array = source._array if isinstance(source, Tensor) else source
                if isinstance(target, Tensor):
                    np.copyto(target._array, array, casting="same_kind")
                else:
                    np.copyto(target, array, casting="same_kind")
            elif kind == "grad":
                _, tensor, value = entry
                tensor._grad = _resolve(value, env)
            elif kind == "update":  # the step again, eagerly, from its step counts before
                _, optimizer, before = entry
                optimizer.update_again(before)
            elif kind == "data":
                _, var, ref = entry
                copy = ref()
                if copy is not None and id(var) in env:
                    copy._array = env[id(var)]._array
            elif kind == "backward":
                _, outputs, seeds, retain, create, grads = entry
                run_backward(list(_resolve(outputs, env)), list(_resolve(seeds, env)), retain,
                             create)  # fmt: skip
                for leaf, ref in grads:  # the .grad tensors the Python may hold now
                    pending = ref()
                    if pending is not None and leaf._grad is not None:
                        pending._array = leaf._grad._array
                        leaf._grad = pending

    def _held(self, tensor: Tensor) -> Tensor:
        """``tensor`` (not the journal's) for the journal, its version noted: the journal runs
        again only while it is unchanged."""
        if id(tensor) not in self._read:
            self._read[id(tensor)] = (tensor, tensor._version_counter.value)
        return tensor

    def _spec(self, value: Any) -> Any:
        """``value`` for the journal: a tensor or array the journal made as its Var (a `_Ref`,
        so the journal never keeps it alive), anything else as it is."""
        if type(value) in _PLAIN:
            return value
        if isinstance(value, (Tensor, np.ndarray)):
            known = self._known.get(id(value._array if isinstance(value, Tensor) else value))
            if known is not None:
                for var in known[0]:
                    if id(var) in self._made:
                        return _Ref(var, weakref.ref(value))
            return self._held(value) if isinstance(value, Tensor) else value
        if type(value) in (tuple, list):
            mapped = [self._spec(v) for v in value]
            return tuple(mapped) if type(value) is tuple else mapped
        if type(value) is dict:
            return {k: self._spec(v) for k, v in value.items()}
        return value


def _pending_node(op: Any, var: Var) -> Pending:
    """A `Pending` node, made field by field (one per pending tensor that requires grad)."""
    node = _new(Pending)
    node.edges, node.out_meta, node.watched = (), ((var.shape, var.dtype),), ()
    node.sequence, node.hooks, node.retained, node.trace = 0, None, None, None
    node.op = getattr(op, "name", op)
    node.label = getattr(op, "backward_name", op)
    return node


def _placeholder(var: Var, strides: tuple | None) -> np.ndarray:
    """An array of ``var``'s shape and dtype, laid out with ``strides`` (None: C order), as the
    record's was: what the Python asks of it (``is_contiguous()``) gets the record's answer."""
    if strides is None or any(s < 0 for s in strides):
        return np.empty(var.shape, var.dtype)
    span = sum((n - 1) * s for n, s in zip(var.shape, strides)) + var.dtype.itemsize
    memory = np.empty(max(span, 0), np.uint8)
    return np.ndarray(var.shape, var.dtype, buffer=memory, strides=strides)


def _name(fn) -> str:
    return getattr(fn, "__qualname__", repr(fn))


def _label(kind: str, key: Any) -> str:
    """An event in words, for messages: ``sub``, ``Optimizer.step()``, ``item()``..."""
    if kind == "op":
        return key.name
    if kind == "call":
        return f"{getattr(key, '__qualname__', key)}()"
    if kind in ("read", "inplace"):
        return str(key)
    return {"backward": "backward()", "write": "an in-place write", "grad": "a .grad set"}.get(
        kind, kind
    )


def _flat(result: Any) -> list:
    """The tensors and arrays of a whole call's result, in the record's order."""
    if isinstance(result, (Tensor, np.ndarray)):
        return [result]
    if type(result) in (tuple, list):
        return [item for part in result for item in _flat(part)]
    return []


#: Argument types that are literals: compared and journaled as they are.
_PLAIN = frozenset({int, float, bool, str, type(None)})


def _literal(value: Any) -> bool:
    """Whether ``value`` is a literal, or a tuple of them (a dim, a shape), or a dtype."""
    if type(value) in _PLAIN or isinstance(value, np.dtype):
        return True
    return type(value) is tuple and all(type(v) in _PLAIN for v in value)


class _Ref:
    """A tensor of the journal, by its Var (and a weak reference to it, for when its
    journal entry does not run again)."""

    __slots__ = ("var", "ref")

    def __init__(self, var: Var, ref) -> None:
        self.var, self.ref = var, ref


def _resolve(value: Any, env: dict) -> Any:
    """``value`` from the journal with each `_Ref` the tensor it names now."""
    return map_structure(value, lambda item: _ref_now(item, env) if type(item) is _Ref else item)


def _ref_now(ref: _Ref, env: dict) -> Any:
    made = env.get(id(ref.var))
    if made is None:
        made = ref.ref()
        if made is None:
            raise GraphError(
                "compile: a call that went another way than its record needs a tensor the "
                "compiled program made and nobody holds any more; run this function uncompiled"
            )
    return made


def _transplant(result: Tensor, into: Tensor) -> None:
    """Make the pending tensor ``into`` the eager ``result`` (the Python holds ``into``)."""
    into._array, into._grad_fn, into._output_nr = result._array, result._grad_fn, result._output_nr
    into._requires_grad, into._counter, into._view = (
        result._requires_grad,
        result._counter,
        result._view,
    )
    into._tangent = result._tangent


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


__all__ = ["Pending", "Pieces", "Unrunnable"]
