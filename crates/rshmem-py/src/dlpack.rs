//! DLPack capsules over symmetric memory, so that PyTorch (and any DLPack consumer)
//! views an allocation without a copy.
//!
//! A capsule named `dltensor` holds a `DLManagedTensor` (the unversioned DLPack ABI,
//! which every consumer accepts) whose manager context keeps a reference to the Python
//! object that owns the view; its deleter drops both. A consumer renames the capsule
//! `used_dltensor` and calls the deleter when its tensor dies; a capsule nobody consumed
//! calls it from its own destructor.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::{c_void, CStr};
use std::ptr::NonNull;

/// `DLDevice`.
#[repr(C)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

/// `DLManagedTensor`.
#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

/// What a capsule owns: the tensor first (so a pointer to it is a pointer to this), the
/// shape and strides it points into, and the owner it keeps alive.
#[repr(C)]
struct Managed {
    tensor: DlManagedTensor,
    shape: Vec<i64>,
    strides: Vec<i64>,
    /// A strong reference to the owning Python object.
    owner: *mut ffi::PyObject,
}

const NAME: &CStr = c"dltensor";

/// The deleter consumers call (and the capsule's destructor, when nobody consumed it).
unsafe extern "C" fn delete(t: *mut DlManagedTensor) {
    if t.is_null() {
        return;
    }
    // SAFETY: `t` is the first field of a `Managed` made by `Box::into_raw` in
    // `dlpack_capsule`, and DLPack calls the deleter once.
    let m = unsafe { Box::from_raw(t as *mut Managed) };
    // Releasing the owner needs the interpreter (a consumer may call from any thread,
    // holding it or not). While the interpreter shuts down, tensors die after it stopped
    // taking calls: the reference is left to the process's end then.
    // SAFETY: plain C-API calls; the GIL is taken around the decref.
    unsafe {
        if !m.owner.is_null() && ffi::Py_IsInitialized() != 0 {
            let gil = ffi::PyGILState_Ensure();
            ffi::Py_DecRef(m.owner);
            ffi::PyGILState_Release(gil);
        }
    }
}

/// The capsule's destructor: deletes the tensor unless a consumer took it.
unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: called by Python with the capsule, interpreter held.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, NAME.as_ptr()) == 1 {
            let p = ffi::PyCapsule_GetPointer(capsule, NAME.as_ptr()) as *mut DlManagedTensor;
            delete(p);
        } else {
            // Renamed by a consumer (`used_dltensor`): it owns the tensor now. A failed
            // name check sets an exception that must not leak out of a destructor.
            ffi::PyErr_Clear();
        }
    }
}

/// A DLPack capsule over `shape` elements (row-major, contiguous) at `addr`.
/// `code`/`bits` is the DLPack type (0 int, 1 uint, 2 float, 4 bfloat, 6 bool),
/// `device_type` 1 (CPU) or 2 (CUDA). `owner` is kept alive while any consumer's tensor is.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn dlpack_capsule<'py>(
    py: Python<'py>,
    owner: Py<PyAny>,
    addr: usize,
    shape: Vec<i64>,
    code: u8,
    bits: u8,
    device_type: i32,
    device_id: i32,
) -> PyResult<Bound<'py, PyCapsule>> {
    let mut strides = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1].max(1);
    }
    let mut m = Box::new(Managed {
        tensor: DlManagedTensor {
            dl_tensor: DlTensor {
                data: addr as *mut c_void,
                device: DlDevice { device_type, device_id },
                ndim: shape.len() as i32,
                dtype: DlDataType { code, bits, lanes: 1 },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete),
        },
        shape,
        strides,
        owner: owner.into_ptr(),
    });
    m.tensor.dl_tensor.shape = m.shape.as_mut_ptr();
    m.tensor.dl_tensor.strides = m.strides.as_mut_ptr();
    let raw = Box::into_raw(m);
    // SAFETY: `raw` is a live, leaked box; its address does not change.
    unsafe { (*raw).tensor.manager_ctx = raw as *mut c_void };
    let ptr = NonNull::new(raw as *mut c_void).expect("a box is never null");
    // SAFETY: `ptr` points to a `DlManagedTensor` (first field of `Managed`) that stays
    // valid until its deleter runs, which the destructor or the consumer calls once.
    let made = unsafe { PyCapsule::new_with_pointer_and_destructor(py, ptr, NAME, Some(capsule_destructor)) };
    if made.is_err() {
        // SAFETY: the capsule was not made, so nobody else will delete the tensor.
        unsafe { delete(raw as *mut DlManagedTensor) };
    }
    made
}

/// Adds this module's functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dlpack_capsule, m)?)?;
    Ok(())
}
