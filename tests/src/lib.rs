//! Integration and compile-time tests of toolwright; nothing here is published.
