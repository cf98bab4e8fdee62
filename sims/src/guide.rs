#![doc = include_str!("../../docs/your-implementation.md")]
