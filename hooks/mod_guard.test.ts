// The guard answered in Claude Code's own process (hooks/mod_guard.ts), against a guard the test
// plays: `sh hooks/guard.sh --serve` is the test's `process.spawn` hook, its socket the test's
// `http.fetch` hook, guard.sh run once its `process.run` hook; the settings hooks beneath are the
// test's `classic.PreToolUse` hook. Each test asks as a new session would (the module's state is
// the session's), so each starts from a guard not yet started.
import type { On, OpEventResult, PreToolUseResult, ProcessSpawnChunk } from 'claude-code'
import { expect, test } from 'claude-code/testing'

type Spawned = OpEventResult<'process.spawn'>
type Asked = { tool_name: string; tool_input: Record<string, unknown>; hook_event_name: string; agent_id?: string; agent_type?: string }

const ENV = { CLAUDE_PLUGIN_ROOT: '/plugin', CLAUDE_PID: '4242', CLAUDE_PROJECT_DIR: '/project' }

// The session as the guard needs it, and a guard that starts (pid 77) and stays up until `end()`.
function session(on: On, runtime?: string, opts: { tenSecondsPass?: boolean; agentType?: string } = {}) {
  const spawned: string[][] = []
  const marks: (string | undefined)[] = []
  let end: () => void = () => undefined
  const ended = new Promise<void>(resolve => (end = resolve))
  clock(on, opts.tenSecondsPass)
  on('process.hookEnv', () => ({ value: ENV }))
  on('env.get', () => ({ value: runtime }))
  on('env.set', (_, e) => {
    marks.push(e.value)
    return { value: {} }
  })
  on('session.info', () => ({ value: { transcriptPath: '/home/t.jsonl', ...(opts.agentType ? { agentType: opts.agentType } : {}) } }))
  on('session.cwd', () => ({ value: '/project' }))
  const nonces: string[] = []
  on('process.spawn', async function* (_, e): AsyncGenerator<ProcessSpawnChunk, Spawned> {
    spawned.push([...e.argv])
    nonces.push(String(e.input ?? '').trim())
    yield { stream: 'stdout', text: '{"socket": "/tmp/aether-guard-x/guard.sock", "pid": 77}\n' }
    await ended
    return { value: { code: 0, signal: null } }
  })
  return { spawned, marks, end, nonce: () => nonces[nonces.length - 1] ?? '' }
}

// The session's clock: it stands still at one moment, and a wait never ends by itself (but the
// guard's 10 s for an answer, when `tenSecondsPass`).
function clock(on: On, tenSecondsPass = false) {
  on('clock.now', () => ({ value: 1000000 }))
  on('clock.sleep', (_, e) => (tenSecondsPass && e.ms === 10000 ? { value: undefined } : new Promise<never>(() => undefined)))
}

// The guard over its socket: `answer(call)` is its decision, with the token it was started with;
// each call it was asked, kept.
function served(on: On, nonce: () => string, answer: (asked: Asked) => unknown) {
  const asked: Asked[] = []
  on('http.fetch', (_, e) => {
    expect([e.url, e.init?.socketPath, e.init?.method]).toEqual(['http://guard/decide', '/tmp/aether-guard-x/guard.sock', 'POST'])
    const call = JSON.parse(String(e.init?.body)) as Asked
    asked.push(call)
    return { value: { status: 200, ok: true, headers: {}, text: JSON.stringify({ decision: answer(call), nonce: nonce() }) } }
  })
  return asked
}

// guard.sh run once by the mod: its answer, and each run kept.
function once(on: On, decision: unknown) {
  const ran: { argv: readonly string[]; mark: string | undefined; stdin: string | undefined }[] = []
  on('process.run', (_, e) => {
    ran.push({ argv: e.argv, mark: e.init?.env?.AETHER_MOD_GUARD, stdin: e.init?.stdin })
    if (e.argv[0] === 'kill') return { value: { exitCode: 0, stdout: '', stderr: '', isStdoutTruncated: false, isStderrTruncated: false } }
    const out = decision === null ? '' : JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', ...(decision as object) } })
    return { value: { exitCode: 0, stdout: out, stderr: '', isStdoutTruncated: false, isStderrTruncated: false } }
  })
  return ran
}

const deny = (why: string) => ({ permissionDecision: 'deny', permissionDecisionReason: why })
const allow = { permissionDecision: 'allow', permissionDecisionReason: "Aether's own helper" }

test('each call is asked of the guard that stays up, started once; its deny refuses the call', async ($, on) => {
  const { spawned, marks, end, nonce } = session(on)
  const asked = served(on, nonce, call => (String(call.tool_input.command).includes('> f') ? deny('no writes here') : null))
  on('classic.PreToolUse', () => ({})) // the settings hooks beneath: no word
  on('tool.run', () => ({ result: 'ran', text: 'ran' }))
  const refused = await $.tool.call({ tool: 'Bash', command: 'echo x > f' })
  expect(refused.deny ?? refused.text).toContain('no writes here')
  const ran = await $.tool.call({ tool: 'Bash', command: 'ls' })
  expect(ran.deny).toBeUndefined()
  expect(spawned).toEqual([['sh', '/plugin/hooks/guard.sh', '--serve']])
  expect(marks).toEqual(['4242 77 /tmp/aether-guard-x/guard.sock']) // guard.sh steps aside while pid 77 runs for Claude Code 4242
  expect(nonce().length).toBeGreaterThan(20) // the token handed on its stdin
  expect(asked.map(a => [a.hook_event_name, a.tool_name, a.tool_input.command])).toEqual([
    ['PreToolUse', 'Bash', 'echo x > f'],
    ['PreToolUse', 'Bash', 'ls'],
  ])
  end()
})

test("the guard's allow stands unless a settings hook beneath asks or denies", async ($, on) => {
  const { end, nonce } = session(on)
  served(on, nonce, () => allow)
  let below: PreToolUseResult = {}
  const seen: string[] = []
  on('classic.PreToolUse', () => below)
  on('tool.run', (_, e) => {
    if (e.tool === 'Bash') seen.push(e.command)
    return { result: 'ran', text: 'ran' }
  })
  await $.tool.call({ tool: 'Bash', command: 'aether status' })
  below = { deny: "the user's own hook says no" }
  const refused = await $.tool.call({ tool: 'Bash', command: 'aether status --json' })
  expect(refused.deny ?? refused.text).toContain("the user's own hook says no")
  expect(seen).toEqual(['aether status'])
  end()
})

test('a guard that does not answer: it is ended, and the call judged by guard.sh run once, told no guard stays up', async ($, on) => {
  const { end } = session(on)
  on('http.fetch', () => {
    throw new Error('ECONNREFUSED')
  })
  const ran = once(on, deny('read-only, by guard.sh'))
  on('classic.PreToolUse', () => ({}))
  const refused = await $.tool.call({ tool: 'Write', file_path: '/project/a.py', content: 'x' })
  expect(refused.deny ?? refused.text).toContain('read-only, by guard.sh')
  expect(ran.map(o => [o.argv.join(' '), o.mark])).toEqual([
    ['kill 77', undefined],
    ['sh /plugin/hooks/guard.sh', ''],
  ])
  expect(JSON.parse(String(ran[1]?.stdin))).toMatchObject({ tool_name: 'Write', tool_input: { file_path: '/project/a.py' } })
  end()
})

// A guard the mod cannot trust with this call: it is ended (`kill`), and guard.sh run once judges.
const UNTRUSTED: [string, (on: On) => () => void][] = [
  [
    'an answer without the token the mod handed its guard is not taken: guard.sh judges',
    on => {
      const { end } = session(on)
      served(on, () => 'a-guess', () => null) // a process that took the socket's place lets everything through
      return end
    },
  ],
  [
    'a guard that hangs is given 10 s, then ended, and the call judged by guard.sh',
    on => {
      const { end } = session(on, undefined, { tenSecondsPass: true })
      on('http.fetch', () => new Promise<never>(() => undefined))
      return end
    },
  ],
]
for (const [name, guard] of UNTRUSTED) {
  test(name, async ($, on) => {
    const end = guard(on)
    const ran = once(on, deny('read-only, by guard.sh'))
    on('classic.PreToolUse', () => ({}))
    const refused = await $.tool.call({ tool: 'Bash', command: 'echo x > f' })
    expect(refused.deny ?? refused.text).toContain('read-only, by guard.sh')
    expect(ran.map(o => o.argv[0])).toEqual(['kill', 'sh'])
    end()
  })
}

test('calls that come together start one guard', async ($, on) => {
  const { spawned, end, nonce } = session(on)
  served(on, nonce, () => null)
  on('classic.PreToolUse', () => ({}))
  on('tool.run', () => ({ result: 'ran', text: 'ran' }))
  await Promise.all(['ls', 'pwd', 'date'].map(command => $.tool.call({ tool: 'Bash', command })))
  expect(spawned.length).toBe(1)
  end()
})

test("a session run as an agent (--agent) is judged as that agent's", async ($, on) => {
  const { end, nonce } = session(on, undefined, { agentType: 'ant:watcher' })
  const asked = served(on, nonce, () => null)
  on('classic.PreToolUse', () => ({}))
  on('tool.run', () => ({ result: 'ran', text: 'ran' }))
  await $.tool.call({ tool: 'Bash', command: 'ls' })
  expect(asked.map(a => [a.agent_id, a.agent_type])).toEqual([[undefined, 'ant:watcher']])
  end()
})

test('a guard that cannot be started at all (the spawn refused) leaves the calls to guard.sh beneath', async ($, on) => {
  clock(on)
  on('process.hookEnv', () => ({ value: ENV }))
  on('env.get', () => ({ value: undefined }))
  on('process.spawn', async function* (): AsyncGenerator<ProcessSpawnChunk, Spawned> {
    throw new Error('refused by policy')
  })
  on('classic.PreToolUse', () => ({ deny: 'guard.sh: read-only' }))
  for (const command of ['echo x > f', 'echo y > g']) {
    const refused = await $.tool.call({ tool: 'Bash', command })
    expect(refused.deny ?? refused.text).toContain('guard.sh: read-only')
  }
})

test('no guard.sh either: the call is refused, as a failing guard hook refuses it', async ($, on) => {
  const { end } = session(on)
  on('http.fetch', () => ({ value: { status: 500, ok: false, headers: {}, text: 'boom' } }))
  on('process.run', () => ({ value: { exitCode: 127, stdout: '', stderr: 'sh: not found', isStdoutTruncated: false, isStderrTruncated: false } }))
  on('classic.PreToolUse', () => ({}))
  const refused = await $.tool.call({ tool: 'Bash', command: 'ls' })
  expect(refused.deny ?? refused.text).toContain("Aether's guard could not judge this call")
  end()
})

test('a guard that will not start leaves each call to guard.sh beneath, and is not started again at once', async ($, on) => {
  const spawned: string[][] = []
  clock(on)
  on('process.hookEnv', () => ({ value: ENV }))
  on('env.get', () => ({ value: undefined }))
  on('process.spawn', async function* (_, e): AsyncGenerator<ProcessSpawnChunk, Spawned> {
    spawned.push([...e.argv])
    yield { stream: 'stderr', text: '{"error": "no Python found for the guard"}\n' }
    return { value: { code: 1, signal: null } }
  })
  on('http.fetch', () => {
    throw new Error('nothing listens')
  })
  let beneath = 0
  on('classic.PreToolUse', () => {
    beneath += 1
    return { deny: 'guard.sh: read-only' }
  })
  for (const command of ['echo x > f', 'echo y > g']) {
    const refused = await $.tool.call({ tool: 'Bash', command })
    expect(refused.deny ?? refused.text).toContain('guard.sh: read-only')
  }
  expect([spawned.length, beneath]).toEqual([1, 2])
})

test('under the markdown runtime, and for the tools guard.sh does not see, the calls are left to the hooks beneath', async ($, on) => {
  const spawned: string[][] = []
  clock(on)
  on('process.hookEnv', () => ({ value: ENV }))
  on('env.get', () => ({ value: 'prompts' }))
  on('process.spawn', async function* (_, e): AsyncGenerator<ProcessSpawnChunk, Spawned> {
    spawned.push([...e.argv])
    return { value: { code: 1, signal: null } }
  })
  on('classic.PreToolUse', () => ({ deny: 'guard.sh judged it' }))
  const refused = await $.tool.call({ tool: 'Bash', command: 'ls' })
  expect(refused.deny ?? refused.text).toContain('guard.sh judged it')
  expect(spawned).toEqual([])
})
