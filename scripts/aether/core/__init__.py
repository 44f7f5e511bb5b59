"""core: the words and tools every layer uses — exceptions, text, clock, paths, the path guard, input limits, output."""
