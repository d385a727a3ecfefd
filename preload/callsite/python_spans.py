# python_spans.py - the Python half of exact spans (python_spans.h).
#
# Run once per interpreter by the library, in the main thread at a safe
# point, with these names given by the C half: _enter(sid) and _leave(sid)
# open and close a span on the calling thread; _module_enter(obj) and
# _module_leave(raised) do so for the outermost nn.Module call only (the C half
# counts the depth and names the span after type(obj)); _optimizer_enter and
# _optimizer_leave are PyTorch's global optimizer step hooks; _register("K:name")
# gives the span id of a name of kind K (enum pi_span_kind); _note(text)
# keeps what the framework said of the calling thread's innermost open span;
# _grad_mode_from(torch._C.is_grad_enabled) lets the C half mark an outermost
# module call made with autograd off;
# _say(text) writes one diagnostic line; _named is PROFINJECT_SPANS as given; _builtin is 0
# when PROFINJECT_SPANS_BUILTIN=0 turned the built-in spans off.
#
# Marked functions are replaced by a wrapper where they are defined (a
# module's attribute, a class's), as soon as their module has run: a
# finder in sys.meta_path, consulted first, hands every import to the next
# finder and only adds a step after the module's code ran. Functions not
# marked are untouched, so they cost nothing. Modules imported before this
# ran are marked in place. Nothing here imports: this may run between two
# bytecodes of an import the job is making.
import sys


RAISED = 1 << 48  # PI_SPAN_RAISED: the call ended by an exception
# code flags: a generator's or coroutine's call returns at its first yield
CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR = 0x20, 0x80, 0x200


def _install():
    marks = {}  # module name -> [how to mark it, ...]
    done = set()
    own_code = set()  # the code of wrappers that torch.compile may compile

    def wraps(fn, span):
        # what functools.wraps copies, without importing it into every process
        for name in ("__module__", "__name__", "__qualname__", "__doc__"):
            try:
                setattr(span, name, getattr(fn, name))
            except (AttributeError, TypeError):
                pass
        span.__dict__.update(getattr(fn, "__dict__", {}))
        # the wrapper's own frame, in a profile of the job: the function's name
        # in the file <profinject> (the time it shows is mostly a collection that
        # an allocation of the call's arguments set off)
        code = span.__code__
        names = {"co_name": getattr(fn, "__name__", code.co_name)}
        if hasattr(code, "co_qualname"):
            names["co_qualname"] = getattr(fn, "__qualname__", code.co_qualname)
        try:
            span.__code__ = code.replace(**names)
        except (TypeError, ValueError):
            pass
        span.__wrapped__ = fn
        span.__profinject_span__ = True
        return span

    def span_of(fn, sid):
        # by_call's body with the id fixed: one call less on every call of the
        # user's own spans, which may be small functions called very often
        flags = getattr(getattr(fn, "__code__", None), "co_flags", 0)
        if flags & CO_COROUTINE:

            async def span(*args, **kwargs):
                _enter(sid)
                try:
                    result = await fn(*args, **kwargs)
                except BaseException:
                    _leave(sid | RAISED)
                    raise
                _leave(sid)
                return result

            return wraps(fn, span)

        def span(*args, **kwargs):
            _enter(sid)
            try:
                result = fn(*args, **kwargs)
            except BaseException:
                _leave(sid | RAISED)
                raise
            _leave(sid)
            return result

        return wraps(fn, span)

    def by_call(fn, sid_of):
        # a span whose name depends on the call: sid_of(args) gives its id
        def span(*args, **kwargs):
            sid = sid_of(args)
            _enter(sid)
            try:
                result = fn(*args, **kwargs)
            except BaseException:
                _leave(sid | RAISED)
                raise
            _leave(sid)
            return result

        return wraps(fn, span)

    def named_by_class(fn, kind, suffix, owner_of=lambda args: type(args[0])):
        # the name is the class of the object it is called on: the user's own
        # subclass (TextClassificationPipeline.__call__), one id per class
        ids = {}

        def sid_of(args):
            owner = owner_of(args) if args else None
            sid = ids.get(owner)
            if sid is None:
                name = getattr(owner, "__name__", "?") + suffix
                sid = ids[owner] = _register("%d:%s" % (kind, name))
            return sid

        return by_call(fn, sid_of)

    def compiled_again(make):
        # a compilation, with dynamo's own word on why it compiled that frame again: the
        # recompile_reason of the metrics it records before _compile returns
        def noting(fn, owner_of):
            def noted(*args, **kwargs):
                utils = sys.modules.get("torch._dynamo.utils")
                metrics = getattr(utils, "_compilation_metrics", None)
                before = metrics[-1] if metrics else None
                try:
                    return fn(*args, **kwargs)
                finally:
                    metrics = getattr(utils, "_compilation_metrics", None)
                    last = metrics[-1] if metrics else None
                    reason = getattr(last, "recompile_reason", None) if last is not before else None
                    if reason:
                        _note(str(reason)[:400])

            return make(wraps(fn, noted), owner_of)

        return noting

    def wrap_attribute(owner, name, make):
        raw = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if raw is None or getattr(raw, "__profinject_span__", False):
            return False
        if isinstance(raw, classmethod):
            wrapped = classmethod(make(raw.__func__, lambda args: args[0]))
        elif isinstance(raw, staticmethod):
            wrapped = staticmethod(make(raw.__func__, None))
        elif callable(raw):
            flags = getattr(getattr(raw, "__code__", None), "co_flags", 0)
            if flags & (CO_GENERATOR | CO_ASYNC_GENERATOR):
                _say("span %s not recorded: a generator's calls end at its first yield" % name)
                return True  # said once: not tried again
            wrapped = make(raw, None)
        else:
            return False
        setattr(owner, name, wrapped)
        return True

    def by_class(kind, suffix):
        def make(fn, owner_of):
            if owner_of is None:
                return named_by_class(fn, kind, suffix)
            return named_by_class(fn, kind, suffix, owner_of)

        return make

    def by_code(kind):
        # a compilation is named by the frame it compiles, its code the first argument
        def make(fn, owner_of):
            ids = {}

            def sid_of(args):
                code = args[0] if args else None
                key = code
                if code in own_code:
                    # the frame of the module call's span: the module is what compiles
                    owner = type((args[2] if len(args) > 2 else {}).get("self"))
                    key = (code, owner)
                sid = ids.get(key)
                if sid is None:
                    if key is not code:
                        name = "%s.__call__" % owner.__name__
                    else:
                        name = "%s (%s:%s)" % (
                            getattr(code, "co_qualname", getattr(code, "co_name", "?")),
                            getattr(code, "co_filename", "?").rsplit("/", 1)[-1],
                            getattr(code, "co_firstlineno", "?"))
                    sid = ids[key] = _register("%d:%s" % (kind, name))
                return sid

            return by_call(fn, sid_of)

        return make

    def fixed(kind, name):
        def make(fn, owner_of):
            return span_of(fn, _register("%d:%s" % (kind, name)))

        return make

    def mark(module, path, make):
        def apply(mod):
            owner = mod
            parts = path.split(".")
            for part in parts[:-1]:
                owner = getattr(owner, part, None)
                if owner is None:
                    return False
            return wrap_attribute(owner, parts[-1], make)

        marks.setdefault(module, []).append(apply)

    def running(mod):
        # a module whose code is still running (this ran in the middle of its
        # import): marked at a later safe point, once it has all its names
        spec = getattr(mod, "__spec__", None)
        return bool(getattr(spec, "_initializing", False))

    def after_import(name, ran=False):
        mod = sys.modules.get(name)
        for apply in marks.get(name, ()):
            key = (name, id(apply))
            if mod is None or key in done or (not ran and running(mod)):
                continue
            try:
                if apply(mod):
                    done.add(key)
            except Exception as error:  # never the job's problem
                done.add(key)
                _say("span in %s not recorded: %r" % (name, error))

    # -- the built-in spans (enum pi_span_kind) --
    def builtin_marks():
        def optimizer_hooks(mod):
            if not hasattr(mod, "register_optimizer_step_post_hook"):
                return True  # a PyTorch before 2.0: no global hooks
            # the library's own functions are the hooks: named "AdamW.step" there
            mod.register_optimizer_step_pre_hook(_optimizer_enter)
            mod.register_optimizer_step_post_hook(_optimizer_leave)
            return True

        marks.setdefault("torch.optim.optimizer", []).append(optimizer_hooks)
        mark("torch.autograd", "backward", fixed(2, "backward"))
        mark("torch.utils.data.dataloader", "_BaseDataLoaderIter.__next__",
             fixed(3, "DataLoader.__next__"))

        compiling = [lambda: False]

        def module_call(mod):
            original = mod.Module.__call__
            if getattr(original, "__profinject_span__", False):
                return True
            # whether an outermost call runs with autograd: torch._C is loaded by now
            _grad_mode_from(getattr(sys.modules.get("torch._C"), "is_grad_enabled", None))

            def __call__(self, *args, **kwargs):
                # inside a region torch.compile traces, is_compiling() is a
                # constant True: the span's calls are never traced, no graph break
                if compiling[0]():
                    return original(self, *args, **kwargs)
                _module_enter(self)
                try:
                    result = original(self, *args, **kwargs)
                except BaseException:
                    _module_leave(True)
                    raise
                _module_leave(False)
                return result

            mod.Module.__call__ = wraps(original, __call__)
            own_code.add(mod.Module.__call__.__code__)
            return True

        def compiler_flag(mod):
            flag = getattr(mod, "is_compiling", None)
            if flag is not None:
                compiling[0] = flag
            return flag is not None

        def collections(gc):
            # Python's own collections, in whichever thread makes them: a
            # full one after a large model's load can take a request's time.
            # Marked once the job has imported gc: an import from here could
            # land inside one the job is making (this runs between two of its
            # bytecodes), and 3.9's import locks do not nest that way
            ids = [_register("10:gc (generation %d)" % g) for g in range(3)]

            def on_gc(phase, info):
                sid = ids[info.get("generation", 2) % 3]
                if phase == "start":
                    _enter(sid)
                else:
                    _leave(sid)

            gc.callbacks.append(on_gc)
            return True

        marks.setdefault("gc", []).append(collections)
        marks.setdefault("torch.nn.modules.module", []).append(module_call)
        marks.setdefault("torch.compiler", []).append(compiler_flag)
        mark("torch._dynamo.convert_frame", "_compile", compiled_again(by_code(9)))
        mark("transformers.pipelines.base", "Pipeline.__call__", by_class(5, ".__call__"))
        mark("transformers.generation.utils", "GenerationMixin.generate", by_class(6, ".generate"))
        mark("transformers.generation.stopping_criteria", "StoppingCriteriaList.__call__",
             fixed(11, "StoppingCriteriaList.__call__"))
        mark("transformers.tokenization_utils_base", "PreTrainedTokenizerBase.__call__",
             by_class(7, ".__call__"))
        mark("transformers.tokenization_utils_base", "PreTrainedTokenizerBase.from_pretrained",
             by_class(8, ".from_pretrained"))
        mark("transformers.modeling_utils", "PreTrainedModel.from_pretrained",
             by_class(8, ".from_pretrained"))

    if _builtin:
        builtin_marks()

    # -- the user's own: module:qualname, separated by commas or spaces --
    for item in _named.replace(",", " ").split():
        module, sep, path = item.partition(":")
        if not sep or not module or not path:
            _say("span %r not recorded: write it as module:function or module:Class.method" % item)
            continue
        mark(module, path, fixed(0, item))

    class Loader:
        def __init__(self, loader):
            self._loader = loader

        def __getattr__(self, name):
            return getattr(self._loader, name)

        def create_module(self, spec):
            create = getattr(self._loader, "create_module", None)
            return create(spec) if create else None

        def exec_module(self, module):
            # the module sees its own loader, as without the spans
            module.__loader__ = self._loader
            if getattr(module, "__spec__", None) is not None:
                module.__spec__.loader = self._loader
            self._loader.exec_module(module)
            after_import(module.__name__, ran=True)

    class Finder:
        """Hands each marked module's import to the next finder, then marks it."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            if name not in marks or name in sys.modules:
                return None
            for finder in sys.meta_path:
                if finder is Finder:
                    continue
                find = getattr(finder, "find_spec", None)
                spec = find(name, path, target) if find else None
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = Loader(spec.loader)
                    return spec
            return None

    sys.meta_path.insert(0, Finder)
    for name in list(marks):
        if name in sys.modules:
            after_import(name)

    def again():
        # __main__ runs as a script, never imported: its functions are marked
        # once they exist, at the next safe point after that; and so are the
        # modules that were running when this ran
        waiting = False
        for name, applies in marks.items():
            if name in sys.modules and any((name, id(a)) not in done for a in applies):
                after_import(name)
                waiting = waiting or any((name, id(a)) not in done for a in applies)
        return waiting

    return again


_again = _install()
