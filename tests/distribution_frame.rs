//! lanesim's frame reader against hostile input: oversized claims are
//! refused before allocation, and a lying length costs only what actually
//! arrives; and it reads the same frames as the format's one definition
//! (`lanesim_target::wire`). The allocator here records the largest
//! allocation made on each thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use lanesim::distribution::frame::{read_frame, Frame, ReadFrameError, DEFAULT_MAX_FRAME};
use lanesim_target::wire::{decode, encode, TooLarge, KEEPALIVE};

struct PeakPerThread;

thread_local! {
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for PeakPerThread {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(layout.size())));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(new_size)));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: PeakPerThread = PeakPerThread;

/// Reads one frame from `bytes` on this thread; returns it and the largest
/// allocation made while reading.
fn read_measured(bytes: &[u8], max: u64) -> (Result<Frame, ReadFrameError>, usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut reader = bytes;
    PEAK.with(|peak| peak.set(0));
    let frame = runtime.block_on(read_frame(&mut reader, max));
    (frame, PEAK.with(Cell::get))
}

fn header(control_len: u32, payload_len: u32) -> Vec<u8> {
    let mut header = control_len.to_be_bytes().to_vec();
    header.extend_from_slice(&payload_len.to_be_bytes());
    header
}

#[test]
fn frames_round_trip() {
    let bytes = encode(b"ctl", b"payload");
    assert_eq!(&bytes[..8], &[0, 0, 0, 3, 0, 0, 0, 7]);
    let (frame, _) = read_measured(&bytes, DEFAULT_MAX_FRAME);
    assert_eq!(
        frame.unwrap(),
        Frame::Data {
            control: b"ctl".to_vec(),
            payload: b"payload".to_vec()
        }
    );
    assert_eq!(
        read_measured(&KEEPALIVE, DEFAULT_MAX_FRAME).0.unwrap(),
        Frame::Keepalive
    );
    let (empty_control, _) = read_measured(&encode(b"", b"p"), DEFAULT_MAX_FRAME);
    assert_eq!(
        empty_control.unwrap(),
        Frame::Data {
            control: vec![],
            payload: b"p".to_vec()
        }
    );
}

#[test]
fn an_oversized_header_is_refused_without_allocating() {
    let (frame, peak) = read_measured(&header(u32::MAX - 1, u32::MAX), DEFAULT_MAX_FRAME);
    match frame {
        Err(ReadFrameError::TooLarge { len, max }) => {
            assert_eq!((len, max), (2 * u64::from(u32::MAX) - 1, DEFAULT_MAX_FRAME));
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // A node-protocol frame (control length `u32::MAX`) has its own bound.
    let (frame, peak_node) = read_measured(&header(u32::MAX, u32::MAX), DEFAULT_MAX_FRAME);
    match frame {
        Err(ReadFrameError::TooLarge { len, max }) => {
            assert_eq!((len, max), (u64::from(u32::MAX), 64));
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(peak_node < 64 * 1024, "allocated {peak_node} bytes");
    assert!(
        peak < 64 * 1024,
        "allocated {peak} bytes for a refused frame"
    );
    // One byte over a configured maximum is refused too.
    assert!(matches!(
        read_measured(&header(60, 5), 64).0,
        Err(ReadFrameError::TooLarge { len: 65, max: 64 })
    ));
}

#[test]
fn a_lying_length_costs_only_what_arrives() {
    // Claims 60 MiB (under the maximum), sends 10 bytes, ends.
    let mut bytes = header(60 * 1024 * 1024, 0);
    bytes.extend_from_slice(b"0123456789");
    let (frame, peak) = read_measured(&bytes, DEFAULT_MAX_FRAME);
    assert!(
        matches!(frame, Err(ReadFrameError::Truncated { expected, got: 18 }) if expected == 8 + 60 * 1024 * 1024),
        "{frame:?}"
    );
    assert!(peak < 64 * 1024, "allocated {peak} bytes for 10 received");
}

#[test]
fn end_of_stream_is_closed_at_a_boundary_and_truncated_inside_a_header() {
    assert!(matches!(
        read_measured(&[], DEFAULT_MAX_FRAME).0,
        Err(ReadFrameError::Closed)
    ));
    assert!(matches!(
        read_measured(&[0, 0, 1], DEFAULT_MAX_FRAME).0,
        Err(ReadFrameError::Truncated {
            expected: 8,
            got: 3
        })
    ));
}

#[test]
fn read_errors_say_what_happened() {
    let (frame, _) = read_measured(&header(100, 0), 10);
    assert_eq!(
        frame.unwrap_err().to_string(),
        "frame body of 100 bytes exceeds the 10-byte maximum"
    );
    let (frame, _) = read_measured(&[0, 0, 0, 4, 0, 0, 0, 0, 1], DEFAULT_MAX_FRAME);
    assert_eq!(
        frame.unwrap_err().to_string(),
        "stream ended inside a frame: 9 of 12 bytes"
    );
}

/// `lanesim_target::wire::decode` is the buffer-keeping (cancel-safe) twin
/// of `read_frame`: fed a stream one byte at a time it finds the same
/// frames at the same offsets, asks for more until a frame is whole, and
/// refuses an oversized header as soon as the header is complete.
#[test]
fn decode_fed_byte_by_byte_finds_exactly_the_frames_read_frame_reads() {
    let mut stream = encode(b"a", b"first");
    stream.extend_from_slice(&KEEPALIVE);
    stream.extend_from_slice(&encode(b"", b""));
    stream.extend_from_slice(&encode(b"ctl", &[7; 300]));
    let mut reader = &stream[..];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut expected = Vec::new();
    while !reader.is_empty() {
        expected.push(runtime.block_on(read_frame(&mut reader, 1024)).unwrap());
    }
    let mut decoded = Vec::new();
    let (mut start, mut end) = (0, 0);
    while end < stream.len() {
        end += 1;
        if let Some((frame, used)) = decode(&stream[start..end], 1024).unwrap() {
            decoded.push(Frame::from(frame));
            start += used;
            assert_eq!(start, end, "a frame completed before its last byte");
        }
    }
    assert_eq!(decoded, expected);
    assert_eq!(decoded.len(), 4);

    let mut lying = header(0, 5000);
    assert!(decode(&lying[..7], 1024).unwrap().is_none());
    assert_eq!(
        decode(&lying, 1024),
        Err(TooLarge {
            claimed: 5000,
            max: 1024
        })
    );
    lying.extend_from_slice(&[1; 10]);
    assert!(
        decode(&lying, 8192).unwrap().is_none(),
        "only 10 of 5000 body bytes"
    );
}
