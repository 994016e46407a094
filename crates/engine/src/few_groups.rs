//! `COUNT` by few groups: a partial aggregation that counts rows in a dense array indexed by
//! the group keys' codes ("perfect hash" aggregation, as DuckDB has; DataFusion hashes every
//! row's keys and compares them with the group they probe into).
//!
//! The rule replaces DataFusion's partial `AggregateExec` when it groups by 1 to 4 plain
//! columns of integers, dates or strings and computes only `count(*)` (any number of times).
//! Each key column gets a code book (code 0 = null, then codes in order of first appearance):
//! integers through a window table around the first value seen, strings of up to 12 bytes by
//! their whole string view (length and bytes, 16 bytes), longer ones by their bytes. A row's
//! slot is its codes side by side, each in as many bits as its code book needs, and the slot's
//! counter is incremented: no hashing or comparing of whole rows. Q1 of the Comet study
//! (`GROUP BY day, month, colour`: 31 × 12 × 7 groups) fits in 14 bits.
//!
//! Invariants: the dense array has at most 2^`MAX_SLOT_BITS` counters. When the code books
//! outgrow it (many groups), the counts so far are emitted as one partial batch and the rest
//! of the partition goes to the original `AggregateExec`, unchanged: a partial aggregation
//! may emit a group more than once, the final aggregation adds them up. The output has the
//! original's schema and properties (the rule only takes aggregations with no output
//! ordering to keep).

use std::fmt;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Int64Array, RecordBatch, StringViewArray, StringViewBuilder,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Int16Type, Int32Type, Int64Type, Int8Type, SchemaRef, UInt16Type,
    UInt32Type, UInt8Type,
};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode, TreeNodeRecursion};
use datafusion::common::{internal_err, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::aggregate::AggregateFunctionExpr;
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties,
    ReplaceChildrenOptions,
};
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use hashbrown::HashMap;

/// At most 2^16 counters (512 KiB): past that a hash table is no worse.
const MAX_SLOT_BITS: u32 = 16;
/// Integers within this many of the first one seen are coded by a table lookup.
const WINDOW: usize = 4096;
const MAX_KEYS: usize = 4;

/// The physical optimizer rule that puts [`FewGroupsCountExec`] in place of partial counts.
#[derive(Debug, Default)]
pub(crate) struct FewGroupsCount;

impl PhysicalOptimizerRule for FewGroupsCount {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| match FewGroupsCountExec::replacing(&node) {
            Some(exec) => Ok(Transformed::yes(Arc::new(exec) as Arc<dyn ExecutionPlan>)),
            None => Ok(Transformed::no(node)),
        })
        .data()
    }

    fn name(&self) -> &str {
        "few_groups_count"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// How a key column is coded.
#[derive(Debug, Clone, Copy, PartialEq)]
enum KeyKind {
    Integer,
    String,
}

fn key_kind(data_type: &DataType) -> Option<KeyKind> {
    match data_type {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::Date32 => Some(KeyKind::Integer),
        DataType::Utf8View => Some(KeyKind::String),
        _ => None,
    }
}

/// `count(*)`, `count(1)`: counts every row (no distinct, filter or ordering).
fn counts_rows(function: &AggregateFunctionExpr) -> bool {
    function.fun().name() == "count"
        && !function.is_distinct()
        && function.order_bys().is_empty()
        && function.expressions().iter().all(|e| {
            e.downcast_ref::<Literal>()
                .is_some_and(|l| !l.value().is_null())
        })
}

/// A partial `count(*)` grouped by few distinct keys; see the module docs.
#[derive(Debug)]
pub(crate) struct FewGroupsCountExec {
    /// The partial `AggregateExec` replaced, which takes over when there are many groups.
    original: Arc<dyn ExecutionPlan>,
    input: Arc<dyn ExecutionPlan>,
    /// Input column index, type and coding of each group key, in output order.
    keys: Vec<(usize, DataType, KeyKind)>,
    /// How many `count(*)` columns follow the keys.
    counts: usize,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl FewGroupsCountExec {
    /// The replacement for `node` when it is a partial aggregation this exec can do.
    fn replacing(node: &Arc<dyn ExecutionPlan>) -> Option<FewGroupsCountExec> {
        let aggregate = node.downcast_ref::<AggregateExec>()?;
        let group_by = aggregate.group_expr();
        let plain = *aggregate.mode() == AggregateMode::Partial
            && !group_by.has_grouping_set()
            && (1..=MAX_KEYS).contains(&group_by.expr().len())
            && aggregate.filter_expr().iter().all(Option::is_none)
            && aggregate.limit_options().is_none()
            && aggregate.properties().output_ordering().is_none();
        if !plain {
            return None;
        }
        let input_schema = aggregate.input().schema();
        let mut keys = Vec::new();
        for (expression, _) in group_by.expr() {
            let column = expression.downcast_ref::<Column>()?;
            let data_type = input_schema.field(column.index()).data_type().clone();
            let kind = key_kind(&data_type)?;
            keys.push((column.index(), data_type, kind));
        }
        if aggregate.aggr_expr().is_empty() || !aggregate.aggr_expr().iter().all(|f| counts_rows(f))
        {
            return None;
        }
        let schema = aggregate.schema();
        // Keys, then one Int64 state per count: what the final aggregation reads.
        let counts = aggregate.aggr_expr().len();
        if schema.fields().len() != keys.len() + counts
            || schema.fields()[keys.len()..]
                .iter()
                .any(|f| f.data_type() != &DataType::Int64)
        {
            return None;
        }
        Some(FewGroupsCountExec {
            original: Arc::clone(node),
            input: Arc::clone(aggregate.input()),
            keys,
            counts,
            schema,
            properties: Arc::clone(aggregate.properties()),
        })
    }
}

impl DisplayAs for FewGroupsCountExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .take(self.keys.len())
            .map(|f| f.name().as_str())
            .collect();
        write!(
            f,
            "FewGroupsCountExec: gby=[{}], counts={}",
            names.join(", "),
            self.counts
        )
    }
}

impl ExecutionPlan for FewGroupsCountExec {
    fn name(&self) -> &str {
        "FewGroupsCountExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        // The keys are plain columns and the counts take no expression.
        Ok(TreeNodeRecursion::Continue)
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn replace_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
        options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let original = Arc::clone(&self.original).replace_children(children, options)?;
        match FewGroupsCountExec::replacing(&original) {
            Some(exec) => Ok(Arc::new(exec)),
            None => Ok(original),
        }
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let mut input = self.input.execute(partition, Arc::clone(&context))?;
        let keys = self.keys.clone();
        let counts = self.counts;
        let schema = Arc::clone(&self.schema);
        let original = Arc::clone(&self.original);
        let input_schema = self.input.schema();
        let out_schema = Arc::clone(&schema);
        let batches = stream::once(async move {
            let mut counter = Counter::new(&keys);
            while let Some(batch) = input.next().await {
                let batch = batch?;
                if counter.add(&batch)? {
                    continue;
                }
                // Too many groups: the counts so far, then the original aggregation over this
                // batch and the rest of the partition.
                let head = counter.finish(&schema, &keys, counts)?;
                let rest: SendableRecordBatchStream = Box::pin(RecordBatchStreamAdapter::new(
                    Arc::clone(&input_schema),
                    stream::once(async move { Ok(batch) }).chain(input),
                ));
                let source = StreamingTableExec::try_new(
                    Arc::clone(&input_schema),
                    vec![Arc::new(OnceStream::new(input_schema, rest))],
                    None,
                    Vec::new(),
                    false,
                    None,
                )?;
                let handoff = original
                    .replace_children(
                        vec![Arc::new(source)],
                        ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
                    )?
                    .execute(0, context)?;
                let all: BoxStream<'static, Result<RecordBatch>> =
                    stream::once(async move { Ok(head) }).chain(handoff).boxed();
                return Result::<BoxStream<'static, Result<RecordBatch>>>::Ok(all);
            }
            let last = counter.finish(&schema, &keys, counts)?;
            Ok(stream::once(async move { Ok(last) }).boxed())
        })
        .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(out_schema, batches)))
    }
}

/// A stream handed to a plan once (the rest of a partition after the hand-off).
struct OnceStream {
    schema: SchemaRef,
    stream: Mutex<Option<SendableRecordBatchStream>>,
}

impl OnceStream {
    fn new(schema: SchemaRef, stream: SendableRecordBatchStream) -> Self {
        OnceStream {
            schema,
            stream: Mutex::new(Some(stream)),
        }
    }
}

impl fmt::Debug for OnceStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OnceStream")
    }
}

impl PartitionStream for OnceStream {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _context: Arc<TaskContext>) -> SendableRecordBatchStream {
        let taken = self.stream.lock().ok().and_then(|mut s| s.take());
        taken.unwrap_or_else(|| {
            // Executed twice: an error, not a silent empty partition.
            Box::pin(RecordBatchStreamAdapter::new(
                Arc::clone(&self.schema),
                stream::once(async { internal_err!("the rest of a partition was read twice") }),
            ))
        })
    }
}

/// Codes of one key column: 0 for null, then 1, 2, ... in order of first appearance.
enum CodeBook {
    Integer {
        base: Option<i64>,
        window: Vec<u32>,
        others: HashMap<i64, u32>,
        values: Vec<i64>,
    },
    String {
        inline: HashMap<u128, u32>,
        long: HashMap<Vec<u8>, u32>,
        values: Vec<String>,
    },
}

impl CodeBook {
    fn new(kind: KeyKind) -> Self {
        match kind {
            KeyKind::Integer => CodeBook::Integer {
                base: None,
                window: vec![0; WINDOW],
                others: HashMap::new(),
                values: Vec::new(),
            },
            KeyKind::String => CodeBook::String {
                inline: HashMap::new(),
                long: HashMap::new(),
                values: Vec::new(),
            },
        }
    }

    /// Distinct non-null values seen.
    fn len(&self) -> usize {
        match self {
            CodeBook::Integer { values, .. } => values.len(),
            CodeBook::String { values, .. } => values.len(),
        }
    }

    fn integer_codes(&mut self, values_in: impl Iterator<Item = i64>, codes: &mut [u32]) {
        let CodeBook::Integer {
            base,
            window,
            others,
            values,
        } = self
        else {
            unreachable!("integer keys have integer code books")
        };
        for (slot, value) in codes.iter_mut().zip(values_in) {
            let base = *base.get_or_insert(value.saturating_sub(WINDOW as i64 / 2));
            let offset = value.wrapping_sub(base) as u64;
            let code = if offset < WINDOW as u64 {
                let entry = &mut window[offset as usize];
                if *entry == 0 {
                    values.push(value);
                    *entry = values.len() as u32;
                }
                *entry
            } else {
                *others.entry(value).or_insert_with(|| {
                    values.push(value);
                    values.len() as u32
                })
            };
            *slot = code;
        }
    }

    fn string_codes(&mut self, array: &StringViewArray, codes: &mut [u32]) {
        let CodeBook::String {
            inline,
            long,
            values,
        } = self
        else {
            unreachable!("string keys have string code books")
        };
        for (row, (slot, &view)) in codes.iter_mut().zip(array.views().iter()).enumerate() {
            // Up to 12 bytes the view is the string itself: length and bytes, zero-padded.
            let code = if view as u32 <= 12 {
                *inline.entry(view).or_insert_with(|| {
                    values.push(array.value(row).to_owned());
                    values.len() as u32
                })
            } else {
                let text = array.value(row);
                match long.get(text.as_bytes()) {
                    Some(&code) => code,
                    None => {
                        values.push(text.to_owned());
                        let code = values.len() as u32;
                        long.insert(text.as_bytes().to_vec(), code);
                        code
                    }
                }
            };
            *slot = code;
        }
    }

    /// The output column of `codes` (0 = null) in the key's type.
    fn column(&self, codes: &[u32], data_type: &DataType) -> Result<ArrayRef> {
        match self {
            CodeBook::Integer { values, .. } => {
                let array: Int64Array = codes
                    .iter()
                    .map(|&c| (c != 0).then(|| values[c as usize - 1]))
                    .collect();
                Ok(cast(&array, data_type)?)
            }
            CodeBook::String { values, .. } => {
                let mut builder = StringViewBuilder::with_capacity(codes.len());
                for &code in codes {
                    match code {
                        0 => builder.append_null(),
                        code => builder.append_value(&values[code as usize - 1]),
                    }
                }
                Ok(Arc::new(builder.finish()))
            }
        }
    }
}

/// The counting state of one partition.
struct Counter {
    /// Input column of each key.
    columns: Vec<usize>,
    books: Vec<CodeBook>,
    /// Bits of each key's code in a slot (the first key lowest), and the counters by slot.
    bits: Vec<u32>,
    counts: Vec<i64>,
    /// Per key, the codes of the current batch's rows.
    codes: Vec<Vec<u32>>,
    slots: Vec<u32>,
}

fn bits_for(distinct: usize) -> u32 {
    // Codes 0..=distinct (0 is null).
    usize::BITS - distinct.leading_zeros()
}

impl Counter {
    fn new(keys: &[(usize, DataType, KeyKind)]) -> Self {
        Counter {
            columns: keys.iter().map(|&(column, _, _)| column).collect(),
            books: keys
                .iter()
                .map(|&(_, _, kind)| CodeBook::new(kind))
                .collect(),
            bits: vec![0; keys.len()],
            counts: vec![0; 1],
            codes: vec![Vec::new(); keys.len()],
            slots: Vec::new(),
        }
    }

    /// Counts the rows of `batch`; `false` (nothing counted) when its groups no longer fit.
    fn add(&mut self, batch: &RecordBatch) -> Result<bool> {
        let rows = batch.num_rows();
        for ((book, codes), &column) in self
            .books
            .iter_mut()
            .zip(&mut self.codes)
            .zip(&self.columns)
        {
            codes.resize(rows, 0);
            code_column(book, batch.column(column), codes)?;
        }
        // The books may have grown: a new layout (and the counters moved) when they did.
        let wanted: Vec<u32> = self.books.iter().map(|b| bits_for(b.len())).collect();
        if wanted.iter().sum::<u32>() > MAX_SLOT_BITS {
            return Ok(false);
        }
        if wanted != self.bits {
            self.relayout(&wanted);
        }
        self.slots.clear();
        self.slots.extend_from_slice(&self.codes[0]);
        let mut shift = self.bits[0];
        for (codes, &bits) in self.codes.iter().zip(&self.bits).skip(1) {
            for (slot, &code) in self.slots.iter_mut().zip(codes) {
                *slot |= code << shift;
            }
            shift += bits;
        }
        let counts = &mut self.counts;
        for &slot in &self.slots {
            counts[slot as usize] += 1;
        }
        Ok(true)
    }

    fn relayout(&mut self, wanted: &[u32]) {
        let total: u32 = wanted.iter().sum();
        let mut counts = vec![0i64; 1 << total];
        for (slot, &count) in self.counts.iter().enumerate() {
            if count == 0 {
                continue;
            }
            let (mut from, mut to, mut moved) = (0u32, 0u32, 0usize);
            for (&old, &new) in self.bits.iter().zip(wanted) {
                let code = (slot >> from) & ((1 << old) - 1);
                moved |= code << to;
                from += old;
                to += new;
            }
            counts[moved] = count;
        }
        self.counts = counts;
        self.bits = wanted.to_vec();
    }

    /// The groups counted so far, in the aggregation's output schema.
    fn finish(
        &self,
        schema: &SchemaRef,
        keys: &[(usize, DataType, KeyKind)],
        counts: usize,
    ) -> Result<RecordBatch> {
        let occupied: Vec<usize> = (0..self.counts.len())
            .filter(|&slot| self.counts[slot] != 0)
            .collect();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(keys.len() + counts);
        let mut shift = 0;
        for ((book, &bits), (_, data_type, _)) in self.books.iter().zip(&self.bits).zip(keys) {
            let codes: Vec<u32> = occupied
                .iter()
                .map(|&slot| ((slot >> shift) & ((1 << bits) - 1)) as u32)
                .collect();
            columns.push(book.column(&codes, data_type)?);
            shift += bits;
        }
        let totals: ArrayRef = Arc::new(Int64Array::from_iter_values(
            occupied.iter().map(|&slot| self.counts[slot]),
        ));
        for _ in 0..counts {
            columns.push(Arc::clone(&totals));
        }
        Ok(RecordBatch::try_new(Arc::clone(schema), columns)?)
    }
}

/// Codes of one key column of a batch into `codes` (0 for nulls; a null slot's hidden value
/// may take a code first, which no group then uses).
fn code_column(book: &mut CodeBook, column: &ArrayRef, codes: &mut [u32]) -> Result<()> {
    macro_rules! integers {
        ($type:ty) => {{
            let array = column.as_primitive::<$type>();
            book.integer_codes(array.values().iter().map(|&v| v as i64), codes)
        }};
    }
    match column.data_type() {
        DataType::Int8 => integers!(Int8Type),
        DataType::Int16 => integers!(Int16Type),
        DataType::Int32 => integers!(Int32Type),
        DataType::Int64 => integers!(Int64Type),
        DataType::UInt8 => integers!(UInt8Type),
        DataType::UInt16 => integers!(UInt16Type),
        DataType::UInt32 => integers!(UInt32Type),
        DataType::Date32 => integers!(Date32Type),
        DataType::Utf8View => book.string_codes(column.as_string_view(), codes),
        other => return internal_err!("few-groups count over a {other} key"),
    }
    if let Some(nulls) = column.nulls().filter(|n| n.null_count() > 0) {
        for (code, valid) in codes.iter_mut().zip(nulls.iter()) {
            if !valid {
                *code = 0;
            }
        }
    }
    Ok(())
}
