"""Code no configuration compiles: the body of an `#if 0`, the other branches of an `#if 1`.

ScyllaDB keeps the Java of the Cassandra classes it ported under `#if 0`, in the middle of its C++
classes; tree-sitter read it as C++ (131 ERROR nodes in `type_parser.hh`, the class lost, its members
functions of the namespace).
vLLM disables CUDA fp8 conversions so (`#if 0  // Disable the following code to reduce the binary
size.`): their calls were edges of the graph. Neither is code of the system's; universal-ctags does
not read it either (its `--if0=no`)."""

from __future__ import annotations

from extractor.cpp.parse import blank_disabled_groups
from extractor.cpp.scan import scan_source
from extractor.model import Language
from extractor.native.calls import each_call

PORTED = b"""namespace cql3 {
class client_state {
    int _keyspace;
#if 0
    private static final Logger logger = LoggerFactory.getLogger(ClientState.class);
    public static final Set<IResource> READABLE = new HashSet<>();
    static
    {
        for (String cf : Arrays.asList(SystemKeyspace.LOCAL, SystemKeyspace.PEERS))
            READABLE.add(DataResource.columnFamily(SystemKeyspace.NAME, cf));
    }
    void retired() { forget(); }
#endif
public:
    void set_keyspace(int k) { check(k); }
#if 0 // the old way
    void login(AuthenticatedUser user) { validate(user); }
#else
    void login(int user) { check(user); }
#endif
#if (1)
    int version() const { return 4; }
#elif defined(OLD_PROTOCOL)
    int version() const { return 3; }
#else
    int version() const { return legacy(); }
#endif
#if 0
#  ifdef NESTED
    void nested_inside();
#  endif
    void after_nested() { gone(); }
#endif
    void last() { check(0); }
};
}
"""


def _functions(data: bytes) -> list[tuple[str, int]]:
    return [(d.qual, d.line) for d in scan_source(data, Language.CPP).defs if d.kind == "function"]


def test_java_under_if_zero_is_not_read_and_the_class_keeps_its_members():
    facts = scan_source(PORTED, Language.CPP)
    assert facts.errors == 0
    assert _functions(PORTED) == [
        ("cql3::client_state::set_keyspace", 15), ("cql3::client_state::login", 19),
        ("cql3::client_state::version", 22), ("cql3::client_state::last", 34)]
    calls = {(caller, callee) for caller, callee, _line in each_call(facts.calls)}
    assert calls == {("cql3::client_state::set_keyspace", "check"), ("cql3::client_state::login", "check"),
                     ("cql3::client_state::last", "check")}


def test_without_the_blanking_the_same_file_reads_the_java():
    """The fixture is a real test of the blanking: read as written, it is what the scan saw before."""
    as_written = PORTED.replace(b"#if 0", b"#if X").replace(b"#if (1)", b"#if Y")
    assert scan_source(as_written, Language.CPP).errors > 0
    assert ("cql3::client_state::retired", 12) in _functions(as_written)


def test_bytes_and_lines_stay_and_only_constant_conditions_count():
    blanked = blank_disabled_groups(PORTED)
    assert len(blanked) == len(PORTED) and blanked.count(b"\n") == PORTED.count(b"\n")
    assert b"LoggerFactory" not in blanked and b"validate" not in blanked and b"legacy" not in blanked
    assert b"#if 0" in blanked and b"#endif" in blanked  # the directives stay
    # `#if 0` in a comment's text, `#if 01`, `#if 0 && X`, `#ifdef 0`-like names: left as written
    for kept in (b"// #if 0 is how\nint a;\n", b"#if 01\nint a;\n#endif\n", b"#if 0 && X\nint a;\n#endif\n",
                 b"#if ZERO\nint a;\n#endif\n", b"#if 1\nint a;\n#endif\n"):
        assert blank_disabled_groups(kept) == kept, kept
    # an `#if 0` never closed is left as written
    assert blank_disabled_groups(b"#if 0\nint a;\n") == b"#if 0\nint a;\n"
