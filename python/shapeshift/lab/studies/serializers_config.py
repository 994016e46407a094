"""Configuration formats: a Cassandra configuration in XML, YAML, JSON, TOML and YSON text.

The comparison of the MessagePack-vs-Thrift debate's write-up sets Cassandra 0.6's XML
configuration (``storage-conf.xml``) beside Cassandra 1.0's YAML one (``cassandra.yaml``). Both
are reproduced here as that write-up quotes them (quotes made ASCII, the indentation of the
original files restored). Each is turned into a tree (the YAML by PyYAML; the XML by
``xml_to_tree``: attributes and child elements become keys, repeated or pluralised children a
list, numbers and booleans typed), and the tree is written in the other formats by their
maintained writers: ``json.dumps(indent=2)``, ``tomli_w`` (TOML has no null: null keys are left
out), ``yaml.safe_dump`` (block style), ``yt.yson`` pretty text, and an element-per-key XML.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

CASSANDRA_06_XML = """\
<Storage>
  <ClusterName>Test Cluster</ClusterName>
  <AutoBootstrap>false</AutoBootstrap>
  <Keyspaces>
    <Keyspace Name="Keyspace1">
      <ColumnFamily CompareWith="BytesType" Name="Standard1" RowsCached="10%" KeysCachedFraction="0"/>
      <ColumnFamily CompareWith="UTF8Type" Name="Standard2"/>
      <ColumnFamily CompareWith="TimeUUIDType" Name="StandardByUUID1"/>
      <ColumnFamily ColumnType="Super"
                    CompareWith="UTF8Type"
                    CompareSubcolumnsWith="UTF8Type"
                    Name="Super1"
                    RowsCached="1000"
                    KeysCachedFraction="0"
                    Comment="A column family with supercolumns, whose column and subcolumn names are UTF8 strings"/>
      <ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy>
      <ReplicationFactor>1</ReplicationFactor>
      <EndPointSnitch>org.apache.cassandra.locator.EndPointSnitch</EndPointSnitch>
    </Keyspace>
  </Keyspaces>
  <Authenticator>org.apache.cassandra.auth.AllowAllAuthenticator</Authenticator>
  <Partitioner>org.apache.cassandra.dht.RandomPartitioner</Partitioner>
  <InitialToken></InitialToken>
  <CommitLogDirectory>/var/lib/cassandra/commitlog</CommitLogDirectory>
  <DataFileDirectories>
    <DataFileDirectory>/var/lib/cassandra/data</DataFileDirectory>
  </DataFileDirectories>
  <CalloutLocation>/var/lib/cassandra/callouts</CalloutLocation>
  <StagingFileDirectory>/var/lib/cassandra/staging</StagingFileDirectory>
  <Seeds>
    <Seed>127.0.0.1</Seed>
  </Seeds>
  <RpcTimeoutInMillis>5000</RpcTimeoutInMillis>
  <CommitLogRotationThresholdInMB>128</CommitLogRotationThresholdInMB>
  <ListenAddress>localhost</ListenAddress>
  <StoragePort>7000</StoragePort>
  <ThriftAddress>localhost</ThriftAddress>
  <ThriftPort>9160</ThriftPort>
  <ThriftFramedTransport>false</ThriftFramedTransport>
  <DiskAccessMode>auto</DiskAccessMode>
  <SlicedBufferSizeInKB>64</SlicedBufferSizeInKB>
  <FlushDataBufferSizeInMB>32</FlushDataBufferSizeInMB>
  <FlushIndexBufferSizeInMB>8</FlushIndexBufferSizeInMB>
  <ColumnIndexSizeInKB>64</ColumnIndexSizeInKB>
  <MemtableThroughputInMB>64</MemtableThroughputInMB>
  <BinaryMemtableThroughputInMB>256</BinaryMemtableThroughputInMB>
  <MemtableOperationsInMillions>0.3</MemtableOperationsInMillions>
  <MemtableFlushAfterMinutes>60</MemtableFlushAfterMinutes>
  <ConcurrentReads>8</ConcurrentReads>
  <ConcurrentWrites>32</ConcurrentWrites>
  <CommitLogSync>periodic</CommitLogSync>
  <CommitLogSyncPeriodInMS>10000</CommitLogSyncPeriodInMS>
  <GCGraceSeconds>864000</GCGraceSeconds>
</Storage>
"""

CASSANDRA_10_YAML = """\
cluster_name: 'Test Cluster'
initial_token:
hinted_handoff_enabled: true
max_hint_window_in_ms: 3600000 # one hour
hinted_handoff_throttle_delay_in_ms: 50
authenticator: org.apache.cassandra.auth.AllowAllAuthenticator
authority: org.apache.cassandra.auth.AllowAllAuthority
partitioner: org.apache.cassandra.dht.RandomPartitioner
data_file_directories:
    - /var/lib/cassandra/data
commitlog_directory: /var/lib/cassandra/commitlog
saved_caches_directory: /var/lib/cassandra/saved_caches
commitlog_sync: periodic
commitlog_sync_period_in_ms: 10000

seed_provider:
    - class_name: org.apache.cassandra.locator.SimpleSeedProvider
      parameters:
          - seeds: "127.0.0.1"

flush_largest_memtables_at: 0.75
reduce_cache_sizes_at: 0.85
reduce_cache_capacity_to: 0.6
concurrent_reads: 32
concurrent_writes: 32
memtable_flush_queue_size: 4
sliced_buffer_size_in_kb: 64
storage_port: 7000
ssl_storage_port: 7001
listen_address: localhost
rpc_address: localhost
rpc_port: 9160
rpc_keepalive: true
rpc_server_type: sync
thrift_framed_transport_size_in_mb: 15
thrift_max_message_length_in_mb: 16
incremental_backups: false
snapshot_before_compaction: false
column_index_size_in_kb: 64
in_memory_compaction_limit_in_mb: 64
multithreaded_compaction: false
compaction_throughput_mb_per_sec: 16
compaction_preheat_key_cache: true
rpc_timeout_in_ms: 10000
endpoint_snitch: org.apache.cassandra.locator.SimpleSnitch
dynamic_snitch_update_interval_in_ms: 100
dynamic_snitch_reset_interval_in_ms: 600000
dynamic_snitch_badness_threshold: 0.1
request_scheduler: org.apache.cassandra.scheduler.NoScheduler
index_interval: 128
encryption_options:
    internode_encryption: none
    keystore: conf/.keystore
    keystore_password: cassandra
    truststore: conf/.truststore
    truststore_password: cassandra
"""

FORMATS = ["xml", "yaml", "json", "toml", "yson text"]


def _typed(text: str | None):
    """XML text as the value a typed format would hold: int, float, bool, None, else str."""
    if text is None or text.strip() == "":
        return None
    value = text.strip()
    if value in ("true", "false"):
        return value == "true"
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    if re.fullmatch(r"-?\d+\.\d*", value):
        return float(value)
    return value


def _is_plural_of(parent: str, child: str) -> bool:
    return parent in (child + "s", child[:-1] + "ies")


def _element_to_tree(element: ET.Element):
    children = list(element)
    if not children and not element.attrib:
        return _typed(element.text)
    tags = [c.tag for c in children]
    if children and not element.attrib and len(set(tags)) == 1 and (
        len(tags) > 1 or _is_plural_of(element.tag, tags[0])
    ):
        return [_element_to_tree(c) for c in children]
    tree = {name: _typed(value) for name, value in element.attrib.items()}
    for tag in dict.fromkeys(tags):
        same = [c for c in children if c.tag == tag]
        tree[tag] = [_element_to_tree(c) for c in same] if len(same) > 1 else _element_to_tree(same[0])
    return tree


def xml_to_tree(text: str) -> dict:
    """The XML document's root element as a tree of dicts, lists and typed scalars."""
    root = ET.fromstring(text)
    return {root.tag: _element_to_tree(root)}


def _tree_to_element(tag: str, value) -> ET.Element:
    element = ET.Element(tag)
    if isinstance(value, dict):
        for key, item in value.items():
            element.append(_tree_to_element(key, item))
    elif isinstance(value, list):
        for item in value:
            element.append(_tree_to_element("item", item))
    elif value is not None:
        element.text = str(value).lower() if isinstance(value, bool) else str(value)
    return element


def tree_to_xml(tree: dict, root: str = "config") -> str:
    """An element per key (list items as ``<item>``), indented by two spaces."""
    element = _tree_to_element(root, tree)
    ET.indent(element, space="  ")
    return ET.tostring(element, encoding="unicode") + "\n"


def _without_nulls(value):
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def documents() -> dict[str, dict[str, str]]:
    """config name -> format -> text; the original of each config is its own format's text."""
    import tomli_w
    import yaml
    import yt.yson

    def others(tree: dict) -> dict[str, str]:
        return {
            "yaml": yaml.safe_dump(tree, sort_keys=False, default_flow_style=False),
            "json": json.dumps(tree, indent=2) + "\n",
            "toml": tomli_w.dumps(_without_nulls(tree)),
            "yson text": yt.yson.dumps(tree, yson_format="pretty").decode() + "\n",
        }

    xml_tree = xml_to_tree(CASSANDRA_06_XML)
    yaml_tree = yaml.safe_load(CASSANDRA_10_YAML)
    return {
        "Cassandra 0.6 storage-conf.xml (original: XML)": {"xml": CASSANDRA_06_XML} | others(xml_tree),
        "Cassandra 1.0 cassandra.yaml (original: YAML)": others(yaml_tree)
        | {"yaml": CASSANDRA_10_YAML, "xml": tree_to_xml(yaml_tree)},
    }


def parsers() -> list[tuple[str, str, object]]:
    """(format, parser name, bytes -> parsed) for every parser the study times; each takes the
    file's bytes, as read from disk (tomllib takes only str: its decode is part of its time)."""
    import tomllib

    import orjson
    import yaml
    import yt.yson

    from shapeshift import yson as shapeshift_yson

    return [
        ("xml", "xml.etree.ElementTree", ET.fromstring),
        ("yaml", "PyYAML (CSafeLoader)", lambda data: yaml.load(data, Loader=yaml.CSafeLoader)),
        ("json", "json (stdlib)", json.loads),
        ("json", "orjson", orjson.loads),
        ("toml", "tomllib (stdlib)", lambda data: tomllib.loads(data.decode())),
        ("yson text", "shapeshift.yson", shapeshift_yson.loads),
        ("yson text", "yt.yson", lambda data: yt.yson.loads(data, always_create_attributes=False)),
    ]
