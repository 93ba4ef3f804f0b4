import pyarrow as pa
import pytest

from rw_cli.store.hummock import HummockStorage
from rw_cli.store.object_store import MemoryObjectStore
from rw_cli.store.state_table import StateTable


@pytest.fixture
def store():
    return HummockStorage(MemoryObjectStore())


@pytest.fixture
def make_table(store):
    ids = iter(range(100, 10_000))

    def make(types, pk):
        schema = pa.schema([pa.field(f"_{i}", t.arrow()) for i, t in enumerate(types)])
        return StateTable(store, next(ids), schema, pk)
    return make
