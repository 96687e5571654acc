import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, lazily } from '../../server/src/tools/define-tool.ts';
import { TOOLS } from '../../server/src/tools/registry.ts';
import { READS_LOCAL_FILES } from '../../server/src/tools/annotations.ts';

describe('defineTool', () => {
  it('builds the input shape at its first read, once, not when the tool is defined', () => {
    let built = 0;
    const tool = defineTool({
      name: 'probe',
      title: 'Probe',
      description: 'A tool for this test.',
      inputSchema: () => {
        built += 1;
        return { text: z.string() };
      },
      annotations: READS_LOCAL_FILES,
      handler: ({ text }) => text,
    });
    expect(built).toBe(0);
    const first = tool.inputSchema;
    expect(Object.keys(first)).toEqual(['text']);
    expect(tool.inputSchema).toBe(first);
    expect(built).toBe(1);
  });

  it('still refuses a NUL byte before the handler runs', () => {
    const tool = defineTool({
      name: 'probe',
      title: 'Probe',
      description: 'A tool for this test.',
      inputSchema: () => ({ text: z.string() }),
      annotations: READS_LOCAL_FILES,
      handler: ({ text }) => text,
    });
    expect(() => tool.handler({ text: 'a\0b' }, undefined as never)).toThrow(/NUL byte/);
  });

  // The server's start reads no tool's shape (it serves the list made at build time): every
  // tool of the registry must go through defineTool's lazy getter, none hand a built shape.
  it.each(TOOLS.map((tool) => [tool.name, tool] as const))(
    '%s builds its shape lazily',
    (_name, tool) => {
      const property = Object.getOwnPropertyDescriptor(tool, 'inputSchema');
      expect(property).toHaveProperty('get', expect.any(Function));
      expect(Object.keys(tool.inputSchema).length).toBeGreaterThan(0);
    },
  );
});

describe('lazily', () => {
  it('makes its value at the first call and hands the same one after, undefined included', () => {
    let made = 0;
    const value = lazily(() => {
      made += 1;
      return made === 1 ? undefined : 'again';
    });
    expect(made).toBe(0);
    expect(value()).toBeUndefined();
    expect(value()).toBeUndefined();
    expect(made).toBe(1);
  });
});
