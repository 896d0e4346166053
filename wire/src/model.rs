//! Software reference model of the iWARP protocol stack.
