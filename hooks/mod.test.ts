// The mod's loop against a helper the test plays (`claude plugin test .`): the hooks here stand
// for the engine; `aether` is answered by the test's `process.run` hook.
import type { AgentInfo, CommandRunInput, On, PromptSubmitInput } from 'claude-code'
import { expect, test } from 'claude-code/testing'

// A helper step's input and answer: JSON, as `aether mod` reads and writes it.
type Payload = Record<string, unknown>

const ran = (exitCode: number, stdout: string, stderr: string) => ({
  value: { exitCode, stdout, stderr, isStdoutTruncated: false, isStderrTruncated: false },
})
const ok = (result: unknown) => ran(0, JSON.stringify({ ok: true, result }), '')

// What the engine would hand the hooks: a typed command, a prompt, an agent in Claude Code's list.
const command = (name: string, args: string): CommandRunInput => ({
  command: name,
  args,
  origin: { kind: 'composer' },
  presentation: { isFullscreen: false, columns: 100 },
})
const prompt = (text: string): PromptSubmitInput => ({ text, wait: false, origin: { kind: 'composer' } })
const agent = (a: Pick<AgentInfo, 'id'> & Partial<AgentInfo>): AgentInfo => ({
  description: '',
  type: 'general-purpose',
  status: 'running',
  kind: 'local_agent',
  taskStatus: 'running',
  label: '',
  startTime: 0,
  cwd: '/project',
  tokenCount: 0,
  tokenSamples: [],
  hasRow: false,
  ...a,
})

// The helper as the test plays it: each `aether mod <step>` answered by `steps[step]`, calls kept.
function helper(on: On, steps: Record<string, (input: Payload) => unknown>) {
  const calls: { step: string; input: Payload }[] = []
  on('process.hookEnv', () => ({ value: { CLAUDE_PLUGIN_ROOT: '/plugin', CLAUDE_PID: '1' } }))
  on('process.run', (_, e) => {
    const step = e.argv[2] ?? ''
    const input: Payload = JSON.parse(e.init?.stdin ?? '{}')
    calls.push({ step, input })
    expect(e.argv.slice(0, 2)).toEqual(['/plugin/bin/aether', 'mod'])
    const answer = steps[step]
    if (answer === undefined) throw new Error(`the test plays no aether mod ${step}`)
    return ok(answer(input))
  })
  on('session.surfaces', () => ({ value: [] }))
  on('fs.write', () => ({ value: undefined }))
  return calls
}

test('a command that needs no judgment is the helper text, with no model', async ($, on) => {
  const calls = helper(on, { serve: () => ({ serve: 'text', text: 'AETHER COLONY · READY', exit_code: 0 }) })
  on('command.run', () => ({ text: 'the markdown command ran' }))
  const out = await $.command.run(command('ant:status', ''))
  expect(out.text).toBe('AETHER COLONY · READY')
  expect(calls).toEqual([{ step: 'serve', input: { command: 'ant:status', args: '' } }])
})

test('what the helper hands to the model goes to the markdown command', async ($, on) => {
  helper(on, { serve: () => ({ serve: 'model', why: 'a command that needs the model' }) })
  on('command.run', () => ({ text: 'the markdown command ran' }))
  expect((await $.command.run(command('ant:init', 'a goal'))).text).toBe('the markdown command ran')
})

test('a helper that cannot run leaves the command to the markdown', async ($, on) => {
  on('process.hookEnv', () => ({ value: { CLAUDE_PLUGIN_ROOT: '/plugin' } }))
  on('process.run', () => ran(127, '', 'not found'))
  on('command.run', () => ({ text: 'the markdown command ran' }))
  expect((await $.command.run(command('ant:build', '1'))).text).toBe('the markdown command ran')
})

test('a spawn action asks for every ant before the first wait, and the end is the helper text', async ($, on) => {
  const spawned: { prompt: string; subagentType: string; model: string | undefined }[] = []
  const calls = helper(on, {
    serve: () => ({
      serve: 'loop',
      action: {
        action: 'spawn',
        line: 'spawn w1 builder, w2 builder',
        spawns: [
          { id: 'w1', ref: 'b1/w1', subagent_type: 'ant:builder', description: 'w1 builder', prompt: 'brief one', model: 'sonnet' },
          { id: 'w2', ref: 'b1/w2', subagent_type: 'ant:builder', description: 'w2 builder', prompt: 'brief two' },
        ],
      },
    }),
    launched: () => ({ launched: ['b1/w1', 'b1/w2'], progress: 'Aether build · running w1, w2' }),
    wait: () => ({ action: 'done', text: 'Phase 1 · COMPLETED', exit_code: 0, line: 'done' }),
  })
  on('agent.spawn', (_, e) => {
    // the kit hands this hook the Agent tool's input (`subagent_type`), not the declared `subagentType`
    const fields: Record<string, unknown> = { ...e }
    spawned.push({ prompt: e.prompt, subagentType: String(fields['subagentType'] ?? fields['subagent_type']), model: e.model })
    return { model: 'm' } // the kit starts no agent: an agent id is core's alone to set
  })
  const out = await $.command.run(command('ant:build', '1 --approve'))
  expect(out).toEqual({ text: 'Phase 1 · COMPLETED', exitCode: 0 })
  expect(spawned).toEqual([
    { prompt: 'brief one', subagentType: 'ant:builder', model: 'sonnet' },
    { prompt: 'brief two', subagentType: 'ant:builder', model: undefined },
  ])
  expect(calls.map(c => c.step)).toEqual(['serve', 'launched', 'wait'])
  // the kit starts no agent, so Claude Code's refusal is what the helper hears (the e2e tests start real ones)
  const { call: launchedCall, ...launched } = calls[1]?.input ?? {}
  expect(launched).toEqual({ spawns: [{ ref: 'b1/w1', why: 'not started' }, { ref: 'b1/w2', why: 'not started' }] })
  const { call: waitCall, ...waited } = calls[2]?.input ?? {}
  expect(waited).toEqual({ refs: ['b1/w1', 'b1/w2'], calls: {} }) // no ant made a call yet
  expect([typeof launchedCall, typeof waitCall, launchedCall === waitCall]).toEqual(['string', 'string', false]) // each call named
})

test("a message that only carries the mod's own ants' reports is dropped; any other goes on", async ($, on) => {
  on('agent.list', () => ({ value: [agent({ id: 'a1', name: 'w1', spawnedBy: 'ant' }), agent({ id: 'a2', name: 'other', type: 'Explore' })] }))
  on('prompt.submit', () => ({ text: 'the model reads it' }))
  const ours = 'Another Claude session sent a message:\n<agent-message from="w1">\n[Subagent hand-back] The report follows:\n  done\n</agent-message>'
  const theirs = ours.replace('from="w1"', 'from="other"')
  expect(await $.prompt.submit(prompt(ours))).toEqual({ drop: "Aether recorded this ant's report" })
  expect(await $.prompt.submit(prompt(theirs))).toEqual({ text: 'the model reads it' })
  expect(await $.prompt.submit(prompt('hello'))).toEqual({ text: 'the model reads it' })
})

test('an ant past its deadline is stopped with TaskStop, and what the stop did goes with the next wait', async ($, on) => {
  const stops: { tool: string; task_id: unknown }[] = []
  const calls = helper(on, {
    serve: () => ({
      serve: 'loop',
      action: { action: 'wait', refs: ['b1/w1', 'b1/w2'], agents: { 'b1/w1': 'a1', 'b1/w2': 'a2' }, stop: ['a1', 'a2'], line: 'w1 (builder) is past its deadline (30m): stopping it' },
    }),
    wait: () => ({ action: 'stop', why: 'deadline', text: 'Stopped: w1 (builder) was stopped 2 times before it answered', exit_code: 14, line: 'stop (deadline)' }),
  })
  on('agent.list', () => ({ value: [agent({ id: 'a1', status: 'killed', spawnedBy: 'ant' }), agent({ id: 'a2', status: 'running', spawnedBy: 'ant' })] }))
  on('tool.call', (_, e) => {
    const taskId = e.tool === 'TaskStop' ? e.task_id : undefined
    stops.push({ tool: e.tool, task_id: taskId })
    if (taskId === 'a2') return { deny: 'no such task' }
    return { result: { message: 'Successfully stopped task: a1 (w1 builder)' }, text: 'Successfully stopped task: a1 (w1 builder)' }
  })
  const out = await $.command.run(command('ant:build', '1'))
  expect(out).toEqual({ text: 'Stopped: w1 (builder) was stopped 2 times before it answered', exitCode: 14 })
  expect(stops).toEqual([{ tool: 'TaskStop', task_id: 'a1' }, { tool: 'TaskStop', task_id: 'a2' }]) // the arguments flat
  expect(calls.map(c => c.step)).toEqual(['serve', 'wait'])
  const { call: _named, ...waited } = calls[1]?.input ?? {}
  expect(waited).toEqual({
    refs: ['b1/w1', 'b1/w2'],
    statuses: { a1: 'killed', a2: 'running' },
    stopped: [
      { agent_id: 'a1', ok: true, text: 'Successfully stopped task: a1 (w1 builder)' },
      { agent_id: 'a2', ok: false, text: 'no such task' },
    ],
    calls: {},
  })
})

test("an aborted ant's answer says how Claude Code lists it (failed: its watchdog stopped it)", async ($, on) => {
  const calls = helper(on, { answer: () => ({ ref: 'b1/w1', line: 'w1 did not answer' }) })
  on('agent.list', () => ({ value: [agent({ id: 'a1', status: 'failed', spawnedBy: 'ant' })] }))
  on('turn.complete', () => ({ text: '' })) // the engine beneath
  await $.turn.complete({ agentId: 'a1', reason: 'aborted', isAborted: true, answer: '', durationMs: 3100, turnId: 't1' })
  expect(calls.map(c => [c.step, c.input.reason, c.input.status])).toEqual([['answer', 'aborted', 'failed']])
})

test("a report of the mod's own ant is dropped even once Claude Code's list has let the ant go", async ($, on) => {
  helper(on, {
    serve: () => ({
      serve: 'loop',
      action: { action: 'spawn', spawns: [{ id: 'w1', ref: 'b1/w1', subagent_type: 'ant:builder', description: 'w1 builder', prompt: 'brief' }] },
    }),
    launched: () => ({ launched: ['b1/w1'], progress: '' }),
    wait: () => ({ action: 'done', text: 'done', exit_code: 0 }),
  })
  on('agent.spawn', () => ({ model: 'm' }))
  on('agent.list', () => ({ value: [] })) // the ant has gone from Claude Code's list
  on('prompt.submit', () => ({ text: 'the model reads it' }))
  await $.command.run(command('ant:build', '1'))
  const late = '<agent-message from="w1">\n[Subagent hand-back] The report follows:\n  done\n</agent-message>'
  // headless (no surface): the reason, which -p prints last, is the command's own end again
  expect(await $.prompt.submit(prompt(late))).toEqual({ drop: 'done' })
  expect(await $.prompt.submit(prompt(late.replace('w1', 'w9')))).toEqual({ text: 'the model reads it' })
})

test("a task notification of the mod's own ant is dropped (its answer came by turn.complete); another agent's goes on", async ($, on) => {
  on('agent.list', () => ({ value: [agent({ id: 'a1', name: 'critic1-2', spawnedBy: 'ant' }), agent({ id: 'a2', name: 'other', type: 'Explore' })] }))
  on('prompt.submit', () => ({ text: 'the model reads it' }))
  const note = (id: string) =>
    `<task-notification>\n<task-id>${id}</task-id>\n<tool-use-id>toolu_plugin_1</tool-use-id>\n<status>completed</status>\n` +
    `<summary>Agent "critic1-2 watcher" finished</summary>\n<result>### Overall Score\n60</result>\n</task-notification>`
  expect(await $.prompt.submit(prompt(note('a1')))).toEqual({ drop: "Aether recorded this ant's report" })
  expect(await $.prompt.submit(prompt(note('a2')))).toEqual({ text: 'the model reads it' })
  expect(await $.prompt.submit(prompt(note('a1') + '\n' + note('a2')))).toEqual({ text: 'the model reads it' })
})

test('a late task notification after a headless stop is dropped with the stop text, which -p prints last', async ($, on) => {
  const stop = 'The plan loop stopped: Aether refused the critic\'s answer twice. No plan was loaded.\nTo go on: run /ant:plan again.'
  helper(on, { serve: () => ({ serve: 'loop', action: { action: 'stop', why: 'refused', text: stop, exit_code: 14 } }) })
  on('agent.list', () => ({ value: [agent({ id: 'a1', name: 'critic1-2', spawnedBy: 'ant' })] }))
  on('prompt.submit', () => ({ text: 'the model reads it' }))
  expect(await $.command.run(command('ant:plan', ''))).toEqual({ text: stop, exitCode: 14 })
  const late = '<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n<result>no score</result>\n</task-notification>'
  expect(await $.prompt.submit(prompt(late))).toEqual({ drop: stop.replace('\n', ' ') }) // a reason keeps no line break
  expect(await $.prompt.submit(prompt('hello'))).toEqual({ text: 'the model reads it' })
})
