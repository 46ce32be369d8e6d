"""The package's surface: every public name documented and typed in the stubs, the
native module's functions all stubbed, and the names NVSHMEM's Python API users expect."""

import ast
from pathlib import Path

import rshmem
from rshmem import _rshmem

PKG = Path(rshmem.__file__).parent


def stub_names(path: Path) -> set:
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def test_every_public_name_is_documented_and_stubbed():
    stubs = stub_names(PKG / "__init__.pyi")
    for name in rshmem.__all__:
        obj = getattr(rshmem, name)
        assert name in stubs, f"{name} is missing from __init__.pyi"
        if not isinstance(obj, str):
            assert (obj.__doc__ or "").strip(), f"{name} has no docstring"
    assert (PKG / "py.typed").exists()


def test_native_module_is_stubbed():
    stubs = stub_names(PKG / "_rshmem.pyi")
    native = {n for n in dir(_rshmem) if not n.startswith("__")}
    assert native <= stubs, f"not stubbed: {sorted(native - stubs)}"


def test_nvshmem_core_names_are_there():
    for name in ("init", "finalize", "my_pe", "n_pes", "array", "tensor", "free", "get_peer_array",
                 "get_peer_tensor", "put", "get", "put_signal", "signal_op", "signal_wait_until", "quiet",
                 "barrier", "barrier_all", "reduce", "reduce_scatter", "broadcast", "fcollect", "alltoall",
                 "team_my_pe", "team_n_pes", "team_split_strided", "team_split_2d", "team_translate_pe",
                 "TEAM_WORLD", "TEAM_SHARED", "atomic_fetch_add", "atomic_compare_swap", "fence"):
        assert hasattr(rshmem, name), name
