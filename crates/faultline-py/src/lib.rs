//! `faultline._native`: the Rust side of the Python package. It loads databases, scans
//! inputs with the GIL released, and hands reports and summaries back as the JSON contract's
//! text, which the Python layer (`python/faultline`) wraps in `Report` and `Summary` objects,
//! so that their fields are the JSON contract's fields by construction.

#![deny(missing_docs)]

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use faultline::EmbeddedDatabase;
use faultline::Summary;
use faultline::{analyze_input, AnalyzeOptions, Analyzer, Baseline};
use faultline::{check_selection, roots_exist, walk, Entry, WalkOptions};
use faultline::{ArchiveRemedy, Database, DbError, Error};
use faultline::{Input, InputKind, ScanOptions, MAX_THREADS};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};

/// What the message of an archive a new one would replace says to do (as the CLI says it).
const RECOMPILE: &str = "recompile with `faultline db compile`";

/// Smallest `max_line_bytes` (the CLI's `--max-line-bytes` floor).
const MIN_LINE_BYTES: usize = 4 << 10;

/// A database: the embedded one (static), or one loaded from a directory or an archive.
enum Db {
    Static(&'static Database),
    Owned(Arc<Database>),
}

impl Db {
    fn get(&self) -> &Database {
        match self {
            Db::Static(db) => db,
            Db::Owned(db) => db,
        }
    }
}

/// A compiled signature database (the Python `faultline.Database` wraps it).
#[pyclass(module = "faultline._native", name = "Database", frozen)]
struct PyDatabase {
    db: Db,
}

/// An input read from `reader`, named `name`; a failure to read its first bytes is an input
/// error at offset 0.
fn input_from_reader(name: &Path, reader: Box<dyn Read + Send>) -> Result<Input, Error> {
    Input::from_reader(name, reader).map_err(|source| Error::Input {
        path: name.to_path_buf(),
        offset: 0,
        source,
    })
}

/// Raises the Python exception (defined in `faultline._errors`) for a library error, with
/// the library's message (`file:line:column: reason`, `path: at byte offset N: reason`).
fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let (class, path, offset) = kind_of(&e);
    let problems: Vec<String> = match &e {
        Error::Report(p) => vec![p.to_string()],
        other => other.problems().iter().map(ToString::to_string).collect(),
    };
    // The command line's message: an archive a new one would replace says how to make it.
    let message = match &e {
        Error::Db(DbError::Archive { reason, .. }) => match reason.remedy() {
            Some(ArchiveRemedy::Recompile) => format!("{e}; {RECOMPILE}"),
            Some(ArchiveRemedy::UpgradeOrRecompile) => {
                format!("{e}; upgrade faultline or {RECOMPILE}")
            }
            None => e.to_string(),
        },
        _ => e.to_string(),
    };
    let build = || -> PyResult<PyErr> {
        let module = py.import("faultline._errors")?;
        let exc = module.getattr(class)?.call1((message.clone(),))?;
        if let Some(p) = path {
            exc.setattr("path", p.display().to_string())?;
        }
        exc.setattr("offset", offset)?;
        exc.setattr("problems", problems.clone())?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|err| err)
}

/// The Python exception class of a library error, and the path and byte offset it names. A
/// baseline's error is its cause's kind (an unreadable baseline is an `InputError`).
fn kind_of(e: &Error) -> (&'static str, Option<&Path>, Option<u64>) {
    match e {
        Error::Db(DbError::Signatures { .. }) | Error::Corpus { .. } => {
            ("SignatureError", None, None)
        }
        Error::Db(DbError::Io { path, .. }) | Error::Io { path, .. } => {
            ("InputError", Some(path.as_path()), None)
        }
        Error::Input { path, offset, .. } => ("InputError", Some(path.as_path()), Some(*offset)),
        Error::Db(DbError::Archive { path, .. }) => ("ArchiveError", Some(path.as_path()), None),
        Error::Db(DbError::Limit(_)) => ("LimitError", None, None),
        Error::Report(_) => ("ReportError", None, None),
        Error::Baseline(inner) => kind_of(inner),
        // A sweep that selects nothing is about its inputs, as the CLI's exit status 2 is.
        Error::Usage(faultline::Usage::NothingSelected(_)) => ("InputError", None, None),
        Error::Db(DbError::UnknownId(_)) | Error::Usage(_) => ("UsageError", None, None),
    }
}

/// The CLI's `-j` rule: 1..=1024; `None` is every core.
fn threads(n: Option<i64>) -> PyResult<usize> {
    match n {
        None => Ok(rayon::current_num_threads()),
        Some(n) if n >= 1 && n as u64 <= MAX_THREADS as u64 => Ok(n as usize),
        Some(n) => Err(PyValueError::new_err(format!(
            "{n} threads is out of range: threads takes 1..={MAX_THREADS}"
        ))),
    }
}

fn scan_options(threads_arg: Option<i64>, max_line_bytes: Option<i64>) -> PyResult<ScanOptions> {
    let mut opts = ScanOptions {
        threads: threads(threads_arg)?,
        ..ScanOptions::default()
    };
    if let Some(m) = max_line_bytes {
        if m < MIN_LINE_BYTES as i64 {
            return Err(PyValueError::new_err(format!(
                "max_line_bytes {m} is too small: at least {MIN_LINE_BYTES} (4 KiB)"
            )));
        }
        opts.max_line_bytes = usize::try_from(m).unwrap_or(usize::MAX);
    }
    Ok(opts)
}

fn analyze_options(
    all: bool,
    max_findings: i64,
    baseline: Option<&PyBaseline>,
) -> PyResult<AnalyzeOptions> {
    let max_findings = usize::try_from(max_findings).map_err(|_| {
        PyValueError::new_err(format!(
            "max_findings {max_findings} is negative (0 means no limit)"
        ))
    })?;
    // Values this large mean "no practical limit" and are clamped, so that the analysis's
    // `max + 16` and `2 * max` cannot overflow on any target (issue 30 item 8).
    let max_findings = max_findings.min(usize::MAX >> 2);
    Ok(AnalyzeOptions {
        all,
        max_findings,
        baseline: baseline.map(|b| b.baseline.clone()),
        ..AnalyzeOptions::default()
    })
}

/// Good runs' templates loaded by `Database.load_baseline` (the Python `faultline.Baseline`
/// wraps it), shared by every scan given it.
#[pyclass(module = "faultline._native", name = "Baseline", frozen)]
struct PyBaseline {
    baseline: Arc<Baseline>,
    /// The command line's warning lines (`faultline: warning: ...`), for `warnings.warn`.
    warnings: Vec<String>,
}

#[pymethods]
impl PyBaseline {
    /// The warnings of its loading, each the command line's whole line.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// Distinct templates held.
    #[getter]
    fn templates(&self) -> usize {
        self.baseline.len()
    }

    /// The report's `baseline` object (`{inputs, templates, templates_dropped}`) as JSON.
    fn info_json(&self) -> String {
        serde_json::to_string(&self.baseline.info()).unwrap_or_default()
    }
}

/// Thread pools kept for reuse, the most recently used last.
const POOLS_KEPT: usize = 4;

/// The pools kept: `(threads, pool)`, the most recently used last.
type Pools = Vec<(usize, Arc<rayon::ThreadPool>)>;

/// A rayon pool for a thread count, reused across calls (building one per call would cost a
/// thread start per worker per call). At most [`POOLS_KEPT`] pools are kept, the least
/// recently used let go first (its threads end once the calls using it return): one pool
/// per distinct `threads` value kept forever would leave 11,328 OS threads for j = 1..150.
fn pool(threads: usize) -> PyResult<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<Pools>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(i) = pools.iter().position(|(n, _)| *n == threads) {
        let hit = pools.remove(i);
        let p = hit.1.clone();
        pools.push(hit);
        return Ok(p);
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("faultline-{i}"))
            .build()
            .map_err(|e| PyValueError::new_err(format!("cannot start {threads} threads: {e}")))?,
    );
    pools.push((threads, p.clone()));
    if pools.len() > POOLS_KEPT {
        pools.remove(0);
    }
    Ok(p)
}

/// A path `-` is the file `./-` unless `stdin` is set: a service passing a user's path must
/// not read its own standard input (issue 30).
fn as_file(path: PathBuf, stdin: bool) -> PathBuf {
    if !stdin && path.as_os_str() == "-" {
        PathBuf::from("./-")
    } else {
        path
    }
}

/// A Python binary file object read as a Rust stream: each `read` takes the GIL for one
/// `fileobj.read(n)` call; the scan itself runs without it.
struct PyReader {
    obj: Py<PyAny>,
    /// Set when `read()` returned something that is not bytes: a `TypeError` for the caller.
    wrong_type: Arc<Mutex<Option<String>>>,
    /// Set when `read()` raised a `BaseException` that is not an `Exception`
    /// (`KeyboardInterrupt`, `SystemExit`, `GeneratorExit`): raised again to the caller, never
    /// turned into a read error.
    interrupt: Arc<Mutex<Option<PyErr>>>,
}

impl Read for PyReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        Python::with_gil(|py| {
            let got = self
                .obj
                .bind(py)
                .call_method1("read", (buf.len(),))
                .map_err(|e| {
                    let message = e.to_string();
                    if !e.is_instance_of::<pyo3::exceptions::PyException>(py) {
                        *self.interrupt.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    }
                    io::Error::other(message)
                })?;
            let copy = |data: &[u8], buf: &mut [u8]| {
                if data.len() > buf.len() {
                    return Err(io::Error::other(format!(
                        "read({}) returned {} bytes",
                        buf.len(),
                        data.len()
                    )));
                }
                buf[..data.len()].copy_from_slice(data);
                Ok(data.len())
            };
            if let Ok(b) = got.downcast::<PyBytes>() {
                return copy(b.as_bytes(), buf);
            }
            if let Ok(b) = got.downcast::<PyByteArray>() {
                return copy(&b.to_vec(), buf);
            }
            let what = got
                .get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string());
            let message = if got.is_none() {
                "read() returned None (a non-blocking stream with no data)".to_string()
            } else {
                format!("read() returned {what}, not bytes: open the file in binary mode ('rb')")
            };
            if !got.is_none() {
                *self.wrong_type.lock().unwrap_or_else(|e| e.into_inner()) = Some(message.clone());
            }
            Err(io::Error::other(message))
        })
    }
}

/// Memory owned elsewhere that a scan reads in place.
struct Shared(Box<dyn AsRef<[u8]> + Send>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        (*self.0).as_ref()
    }
}

/// A `bytes` object read in place: immutable, and kept alive by the reference held here
/// (dropped without the GIL, pyo3 defers the decrement).
struct BytesView {
    _owner: Py<PyBytes>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the bytes of a `bytes` object never change and live as long as `_owner`.
unsafe impl Send for BytesView {}

impl AsRef<[u8]> for BytesView {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr` and `len` are the object's buffer, alive while `_owner` is.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// A buffer export (`PyObject_GetBuffer`, `PyBUF_SIMPLE`: C-contiguous bytes), held for the
/// scan and released with the GIL. While it is held, the exporter cannot resize or free the
/// memory: a `bytearray` refuses to resize, an `mmap` to close (`BufferError`). The buffer
/// protocol is in the limited API only from Python 3.11, and this package's abi3 wheel
/// supports 3.9: the two functions and `Py_buffer` (whose layout has not changed since
/// Python 3.0) are declared here. Not on Windows, where a 3.9 `python3.dll` does not export
/// them: there the buffer is copied.
#[cfg(not(windows))]
mod export {
    use pyo3::ffi;
    use pyo3::prelude::*;
    use std::os::raw::{c_char, c_int, c_void};

    #[repr(C)]
    struct RawBuffer {
        buf: *mut c_void,
        obj: *mut ffi::PyObject,
        len: ffi::Py_ssize_t,
        itemsize: ffi::Py_ssize_t,
        readonly: c_int,
        ndim: c_int,
        format: *mut c_char,
        shape: *mut ffi::Py_ssize_t,
        strides: *mut ffi::Py_ssize_t,
        suboffsets: *mut ffi::Py_ssize_t,
        internal: *mut c_void,
    }

    extern "C" {
        fn PyObject_GetBuffer(obj: *mut ffi::PyObject, view: *mut RawBuffer, flags: c_int)
            -> c_int;
        fn PyBuffer_Release(view: *mut RawBuffer);
    }

    /// `PyBUF_SIMPLE`: contiguous unsigned bytes, no format, shape or strides.
    const SIMPLE: c_int = 0;

    pub struct Export {
        view: Box<RawBuffer>,
    }

    // SAFETY: the export keeps the memory alive and its size fixed until released; the
    // release takes the GIL.
    unsafe impl Send for Export {}

    impl Export {
        /// Exports `obj`'s buffer, or the Python error (`BufferError` for a buffer that is
        /// not C-contiguous).
        pub fn new(obj: &Bound<'_, PyAny>) -> PyResult<Export> {
            // SAFETY: all-zero is a valid `Py_buffer` before the call fills it in.
            let mut view: Box<RawBuffer> = Box::new(unsafe { std::mem::zeroed() });
            // SAFETY: `obj` is a live object and the GIL is held.
            let rc = unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut *view, SIMPLE) };
            if rc != 0 {
                return Err(PyErr::fetch(obj.py()));
            }
            Ok(Export { view })
        }
    }

    impl AsRef<[u8]> for Export {
        fn as_ref(&self) -> &[u8] {
            if self.view.buf.is_null() || self.view.len <= 0 {
                return &[];
            }
            // SAFETY: the exporter keeps `len` bytes at `buf` while the export is held.
            unsafe {
                std::slice::from_raw_parts(self.view.buf as *const u8, self.view.len as usize)
            }
        }
    }

    impl Drop for Export {
        fn drop(&mut self) {
            // SAFETY: released once, with the GIL, as the protocol requires.
            Python::with_gil(|_| unsafe { PyBuffer_Release(&mut *self.view) });
        }
    }
}

/// The bytes of a `bytes`, `bytearray` or `memoryview`, read in place (issue 30: a copy of
/// a memoryview of a 2 GiB mmap peaked at 6.17 GB); anything else is a `TypeError`. A
/// memoryview that is not C-contiguous is copied (`tobytes()`), as is any buffer on Windows.
fn bytes_of(data: &Bound<'_, PyAny>) -> PyResult<Shared> {
    if let Ok(b) = data.downcast::<PyBytes>() {
        let bytes = b.as_bytes();
        return Ok(Shared(Box::new(BytesView {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
            _owner: b.clone().unbind(),
        })));
    }
    let is_view = data
        .py()
        .import("builtins")?
        .getattr("memoryview")
        .and_then(|t| data.is_instance(&t))
        .unwrap_or(false);
    if !is_view && !data.is_instance_of::<PyByteArray>() {
        let what = data.get_type().name()?.to_string();
        return Err(PyTypeError::new_err(format!(
            "scan_bytes() takes bytes, bytearray or memoryview, not {what}"
        )));
    }
    #[cfg(not(windows))]
    if let Ok(e) = export::Export::new(data) {
        return Ok(Shared(Box::new(e)));
    }
    if let Ok(b) = data.downcast::<PyByteArray>() {
        return Ok(Shared(Box::new(b.to_vec())));
    }
    let b = data.call_method0("tobytes")?;
    Ok(Shared(Box::new(
        b.downcast::<PyBytes>()?.as_bytes().to_vec(),
    )))
}

impl PyDatabase {
    /// Checks the options (`threads`, `all`, `max_findings`, `max_line_bytes`), then opens
    /// and analyses one input without the GIL: the report's JSON, or the library's error.
    fn analyse(
        &self,
        py: Python<'_>,
        options: (Option<i64>, bool, i64, Option<i64>),
        baseline: Option<&PyBaseline>,
        open: impl FnOnce() -> Result<Input, Error> + Send,
    ) -> PyResult<Result<String, Error>> {
        let (threads, all, max_findings, max_line_bytes) = options;
        let scan = scan_options(threads, max_line_bytes)?;
        let opts = analyze_options(all, max_findings, baseline)?;
        let db = self.db.get();
        Ok(py.allow_threads(|| Ok(analyze_input(db, open()?, &scan, opts).to_json_line())))
    }
}

#[pymethods]
impl PyDatabase {
    /// The database built into this package (loaded once per process, shared).
    #[staticmethod]
    fn embedded(py: Python<'_>) -> PyDatabase {
        PyDatabase {
            db: Db::Static(py.allow_threads(Database::embedded)),
        }
    }

    /// Compiles the signature directory `path` (its `db.toml` and `*.toml` files).
    #[staticmethod]
    fn from_dir(py: Python<'_>, path: PathBuf) -> PyResult<PyDatabase> {
        let db = py
            .allow_threads(|| faultline::load_dir(&path).and_then(|set| Database::compile(&set)))
            .map_err(|e| to_py(py, e.into()))?;
        Ok(PyDatabase {
            db: Db::Owned(Arc::new(db)),
        })
    }

    /// Opens a compiled database archive (`faultline db compile`).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<PyDatabase> {
        let db = py
            .allow_threads(|| Database::open(&path))
            .map_err(|e| to_py(py, e.into()))?;
        Ok(PyDatabase {
            db: Db::Owned(Arc::new(db)),
        })
    }

    #[getter]
    fn name(&self) -> &str {
        self.db.get().name()
    }

    #[getter]
    fn version(&self) -> &str {
        self.db.get().version()
    }

    #[getter]
    fn hash(&self) -> &str {
        self.db.get().hash()
    }

    #[getter]
    fn signature_count(&self) -> usize {
        self.db.get().signatures().len()
    }

    /// Loads good runs' templates (`Baseline::load`, what the CLI's `--baseline` does) for
    /// scans of `inputs`: an unreadable baseline raises; its warnings are kept for the caller
    /// to show. `-` is the file `./-` unless `stdin`.
    #[pyo3(signature = (goods, inputs=Vec::new(), max_templates=faultline::DEFAULT_BASELINE_MAX_TEMPLATES as i64, threads=None, max_line_bytes=None, stdin=false))]
    #[allow(clippy::too_many_arguments)]
    fn load_baseline(
        &self,
        py: Python<'_>,
        goods: Vec<PathBuf>,
        inputs: Vec<PathBuf>,
        max_templates: i64,
        threads: Option<i64>,
        max_line_bytes: Option<i64>,
        stdin: bool,
    ) -> PyResult<PyBaseline> {
        let max = usize::try_from(max_templates).map_err(|_| {
            PyValueError::new_err(format!(
                "baseline_max_templates {max_templates} is negative"
            ))
        })?;
        let goods: Vec<PathBuf> = goods.into_iter().map(|p| as_file(p, stdin)).collect();
        let inputs: Vec<PathBuf> = inputs.into_iter().map(|p| as_file(p, stdin)).collect();
        let scan = scan_options(threads, max_line_bytes)?;
        let db = self.db.get();
        let loaded = py
            .allow_threads(|| Baseline::load(db, &goods, &inputs, max, &scan))
            .map_err(|e| to_py(py, e))?;
        Ok(PyBaseline {
            baseline: Arc::new(loaded.baseline),
            warnings: loaded
                .warnings
                .iter()
                .map(|w| format!("faultline: warning: {w}"))
                .collect(),
        })
    }

    /// The report of an input that could not be opened or read at all: no findings, its
    /// `error` set to `message` (what a sweep gives for such an input).
    fn error_report(&self, name: &str, message: String) -> String {
        Analyzer::new(self.db.get(), AnalyzeOptions::default())
            .finish(name, &Default::default(), Some(message))
            .to_json_line()
    }

    /// Scans one path; an input that cannot be opened raises. Returns the report's JSON.
    /// `-` is the file `./-` unless `stdin` (then it is standard input).
    #[pyo3(signature = (path, threads=None, all=false, max_findings=1000, max_line_bytes=None, stdin=false, baseline=None))]
    #[allow(clippy::too_many_arguments)]
    fn scan_path(
        &self,
        py: Python<'_>,
        path: PathBuf,
        threads: Option<i64>,
        all: bool,
        max_findings: i64,
        max_line_bytes: Option<i64>,
        stdin: bool,
        baseline: Option<PyRef<'_, PyBaseline>>,
    ) -> PyResult<String> {
        let path = as_file(path, stdin);
        let options = (threads, all, max_findings, max_line_bytes);
        self.analyse(py, options, baseline.as_deref(), || faultline::open(&path))?
            .map_err(|e| to_py(py, e))
    }

    /// Scans bytes in memory (compressed or UTF-16 bytes are decoded, as from a file).
    #[pyo3(signature = (data, name, threads=None, all=false, max_findings=1000, max_line_bytes=None, baseline=None))]
    #[allow(clippy::too_many_arguments)]
    fn scan_bytes(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        name: PathBuf,
        threads: Option<i64>,
        all: bool,
        max_findings: i64,
        max_line_bytes: Option<i64>,
        baseline: Option<PyRef<'_, PyBaseline>>,
    ) -> PyResult<String> {
        let bytes = bytes_of(data)?;
        let options = (threads, all, max_findings, max_line_bytes);
        self.analyse(py, options, baseline.as_deref(), || {
            let all_bytes = bytes.as_ref();
            let head = &all_bytes[..all_bytes.len().min(4)];
            if InputKind::sniff(head) == InputKind::Plain {
                Ok(Input::from_shared(&name, bytes.0))
            } else {
                input_from_reader(&name, Box::new(io::Cursor::new(bytes)))
            }
        })?
        .map_err(|e| to_py(py, e))
    }

    /// Scans a binary file object, streamed in blocks of `fileobj.read(n)`.
    #[pyo3(signature = (fileobj, name, threads=None, all=false, max_findings=1000, max_line_bytes=None, baseline=None))]
    #[allow(clippy::too_many_arguments)]
    fn scan_reader(
        &self,
        py: Python<'_>,
        fileobj: &Bound<'_, PyAny>,
        name: PathBuf,
        threads: Option<i64>,
        all: bool,
        max_findings: i64,
        max_line_bytes: Option<i64>,
        baseline: Option<PyRef<'_, PyBaseline>>,
    ) -> PyResult<String> {
        if !fileobj.hasattr("read")? {
            let what = fileobj.get_type().name()?.to_string();
            return Err(PyTypeError::new_err(format!(
                "scan_reader() takes a binary file object (with read()), not {what}"
            )));
        }
        let text_io = py.import("io")?.getattr("TextIOBase")?;
        if fileobj.is_instance(&text_io)? {
            return Err(PyTypeError::new_err(
                "scan_reader() takes a binary file object: open the file in binary mode ('rb')",
            ));
        }
        let wrong_type = Arc::new(Mutex::new(None));
        let interrupt = Arc::new(Mutex::new(None));
        let reader = PyReader {
            obj: fileobj.clone().unbind(),
            wrong_type: wrong_type.clone(),
            interrupt: interrupt.clone(),
        };
        let options = (threads, all, max_findings, max_line_bytes);
        let result = self.analyse(py, options, baseline.as_deref(), || {
            input_from_reader(&name, Box::new(reader))
        })?;
        if let Some(e) = interrupt.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Err(e);
        }
        if let Some(message) = wrong_type.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Err(PyTypeError::new_err(message));
        }
        result.map_err(|e| to_py(py, e))
    }

    /// Scans many paths (directories walked recursively, as the CLI does) on `threads`
    /// threads; an input that cannot be read gives a report with its error, but a root that
    /// does not exist, or roots that select no input, raise (the CLI's exit status 2, with
    /// its text). `-` is the file `./-` unless `stdin` (then it is standard input).
    #[pyo3(signature = (paths, threads=None, all=false, max_findings=1000, max_line_bytes=None, glob=Vec::new(), exclude=Vec::new(), stdin=false, baseline=None))]
    #[allow(clippy::too_many_arguments)]
    fn scan_paths(
        &self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        threads: Option<i64>,
        all: bool,
        max_findings: i64,
        max_line_bytes: Option<i64>,
        glob: Vec<String>,
        exclude: Vec<String>,
        stdin: bool,
        baseline: Option<PyRef<'_, PyBaseline>>,
    ) -> PyResult<Vec<String>> {
        let paths: Vec<PathBuf> = paths.into_iter().map(|p| as_file(p, stdin)).collect();
        let scan = scan_options(threads, max_line_bytes)?;
        let opts = analyze_options(all, max_findings, baseline.as_deref())?;
        let workers = pool(scan.threads)?;
        let db = self.db.get();
        py.allow_threads(|| {
            let walk_opts = WalkOptions {
                globs: glob,
                excludes: exclude,
                ..WalkOptions::default()
            };
            roots_exist(&paths)?;
            let entries = walk(&paths, &walk_opts)?;
            check_selection(&paths, &walk_opts, &entries)?;
            // One input scans on the calling thread with every worker (as the CLI does);
            // many inputs scan side by side on the pool.
            let reports = faultline::sweep(db, &entries, &scan, &opts, Some(&workers), &|_| {});
            let reports = reports.iter().flatten().map(|r| r.to_json_line());
            Ok(reports.collect())
        })
        .map_err(|e| to_py(py, e))
    }
}

/// One input of a walk as Python gets it: `(path, relative, error, bytes)`.
type Walked = (String, String, Option<String>, u64);

/// The inputs a directory walk selects, as `faultline scan PATH...` walks them: files in
/// path order, each once; `(path, relative, error)` where `relative` is the path below the
/// root named and `error` is set for a path that could not be examined. FIFOs, sockets and
/// symlink loops are left out, as the CLI skips them. `-` is the file `./-` unless `stdin`.
/// Each entry comes with its size in bytes (0 for a path that could not be examined), for
/// blocks of work sized by bytes. A root that does not exist raises (the CLI's line).
#[pyfunction]
#[pyo3(signature = (paths, glob=Vec::new(), exclude=Vec::new(), stdin=false))]
fn walk_inputs(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    glob: Vec<String>,
    exclude: Vec<String>,
    stdin: bool,
) -> PyResult<Vec<Walked>> {
    let paths: Vec<PathBuf> = paths.into_iter().map(|p| as_file(p, stdin)).collect();
    py.allow_threads(|| {
        let opts = WalkOptions {
            globs: glob,
            excludes: exclude,
            ..WalkOptions::default()
        };
        roots_exist(&paths)?;
        Ok(walk(&paths, &opts)?
            .into_iter()
            .filter_map(|e| match e {
                Entry::Input { path, relative } => {
                    let size = path.metadata().map_or(0, |m| m.len());
                    Some((path.display().to_string(), relative, None, size))
                }
                Entry::Skipped { .. } => None,
                Entry::Failed(e) => {
                    let path = match &e {
                        Error::Io { path, .. } => path.display().to_string(),
                        other => other.to_string(),
                    };
                    Some((path.clone(), path, Some(e.to_string()), 0))
                }
            })
            .collect())
    })
    .map_err(|e| to_py(py, e))
}

/// The extension (lowercase, with its dot) when a directory walk without `glob` leaves a file
/// of this name out as not a log (`faultline scan DIR`'s rule), else `None`: for roots the
/// Python layer lists itself.
#[pyfunction]
fn not_a_log_by_name(name: &str) -> Option<String> {
    faultline::not_a_log_by_name(name)
}

/// The message of a sweep of `roots` with these filters that selected no input (the CLI's
/// `no input was selected from ROOT (--glob ...)`), for roots the Python layer lists itself.
#[pyfunction]
#[pyo3(signature = (roots, glob=Vec::new(), exclude=Vec::new()))]
fn nothing_selected(roots: Vec<PathBuf>, glob: Vec<String>, exclude: Vec<String>) -> String {
    let opts = WalkOptions {
        globs: glob,
        excludes: exclude,
        ..WalkOptions::default()
    };
    Error::from(faultline::Usage::NothingSelected(opts.describe(&roots))).to_string()
}

/// The name, version and hash of the embedded database, without loading it.
#[pyfunction]
fn embedded_identity() -> (&'static str, &'static str, &'static str) {
    Database::embedded_identity()
}

/// Builds the summary of JSON report lines (the Rust `faultline summary`); returns the
/// summary's JSON. Mixed databases raise unless `allow_mixed_databases`.
#[pyfunction]
#[pyo3(signature = (lines, origin, allow_mixed_databases=false))]
fn summary(
    py: Python<'_>,
    lines: Vec<String>,
    origin: String,
    allow_mixed_databases: bool,
) -> PyResult<String> {
    py.allow_threads(|| {
        let mut b = Summary::builder();
        b.add_json_lines(&origin, &lines.join("\n"))?;
        let s = b.finish();
        if !s.ambiguous.is_empty() {
            return Err(Error::Usage(faultline::Usage::Caller(format!(
                "input names shared by distinct inputs: {} (a UTF-8 file name holding a literal backslash escape reads like a name that is not UTF-8); the summary would not tell them apart",
                s.ambiguous.join(", ")
            ))));
        }
        if s.databases.len() > 1 && !allow_mixed_databases {
            let dbs: Vec<String> = s
                .databases
                .iter()
                .map(|d| format!("{} {} (hash {})", d.name, d.version, d.hash))
                .collect();
            return Err(Error::Usage(faultline::Usage::Caller(format!(
                "the reports were made with {} different databases: {}; their diagnoses are not comparable (pass allow_mixed_databases=True to merge them anyway)",
                dbs.len(),
                dbs.join(", ")
            ))));
        }
        Ok(s.to_json())
    })
    .map_err(|e| to_py(py, e))
}

/// The bucket of an input with an error or not and a failed run or not (`faultline::Bucket`):
/// `diagnosed`, `clean` or `errored`, its exit status alone.
#[pyfunction]
fn bucket(error: bool, failed: bool) -> &'static str {
    faultline::Bucket::of(error, failed).as_str()
}

/// Renders a summary's JSON as the CLI prints it: `human` (`scan --summary`), `csv` or `json`.
#[pyfunction]
fn render_summary(py: Python<'_>, summary_json: &str, format: &str) -> PyResult<String> {
    let s: Summary = serde_json::from_str(summary_json)
        .map_err(|e| PyValueError::new_err(format!("not a faultline summary: {e}")))?;
    match format {
        "human" => Ok(s.render_human()),
        "csv" => Ok(s.render_csv()),
        "json" => Ok(s.to_json()),
        other => {
            let _ = py;
            Err(PyValueError::new_err(format!(
                "unknown summary format {other:?}: human, csv or json"
            )))
        }
    }
}

/// The native module: `faultline._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDatabase>()?;
    m.add_class::<PyBaseline>()?;
    m.add_function(wrap_pyfunction!(embedded_identity, m)?)?;
    m.add_function(wrap_pyfunction!(walk_inputs, m)?)?;
    m.add_function(wrap_pyfunction!(nothing_selected, m)?)?;
    m.add_function(wrap_pyfunction!(not_a_log_by_name, m)?)?;
    m.add_function(wrap_pyfunction!(summary, m)?)?;
    m.add_function(wrap_pyfunction!(render_summary, m)?)?;
    m.add_function(wrap_pyfunction!(bucket, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_THREADS", MAX_THREADS)?;
    m.add("SCHEMA_VERSION", faultline::SCHEMA_VERSION)?;
    m.add("SUMMARY_SCHEMA_VERSION", faultline::SUMMARY_SCHEMA_VERSION)?;
    Ok(())
}
