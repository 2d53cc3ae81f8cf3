"""The plan of tests/workflows/steps.sh, read from the workflow files themselves: every job
of each workflow given, in the order its `needs` allow (the file's order otherwise), and
every step of each job in order, printed as bash assignments that steps.sh sources:

    plan_jobs+=(WORKFLOW:JOB)       job_image[WORKFLOW:JOB]=IMAGE or ""  (a container job's)
    job_runs_on[...]=LABEL          job_env[...]="NAME=VALUE\\n..."  (the workflow's and job's)
    plan_steps+=(N)  step_job[N]=WORKFLOW:JOB  step_name[N]=NAME  step_kind[N]=run|uses
    step_text[N]=SCRIPT or OWNER/ACTION@REF  step_with[N:KEY]=VALUE  step_env[N]="NAME=VALUE\\n..."

An env value that is an expression (`${{ secrets.X }}`, `${{ github.token }}`) is printed
as `NAME=${{ X }}`, for steps.sh to give a stand-in. What steps.sh cannot run as GitHub
would is refused here, so that a workflow that grows one fails the test instead of being
run otherwise: a run: script with an expression inside (zizmor refuses those too), a step
or job with `if:`, `shell:` or `working-directory:`, a job with `strategy` or `services`,
a step with both or neither of `run` and `uses`.

Usage: steps.py WORKFLOW.yml...   (ruamel.yaml: tests/workflows.sh's virtual environment)"""

import os
import re
import shlex
import sys

from ruamel.yaml import YAML

EXPRESSION_RE = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
REFUSED_STEP_KEYS = ("if", "shell", "working-directory", "continue-on-error", "timeout-minutes")
REFUSED_JOB_KEYS = ("if", "strategy", "services", "defaults")


class PlanError(Exception):
    pass


def env_lines(mapping, where):
    """NAME=VALUE lines of an env: mapping, an expression kept as ${{ X }}."""
    lines = []
    for name, value in (mapping or {}).items():
        value = "" if value is None else str(value)
        found = EXPRESSION_RE.fullmatch(value.strip())
        if found:
            value = "${{ %s }}" % found.group(1)
        elif EXPRESSION_RE.search(value):
            raise PlanError(f"{where}: env {name} mixes text and an expression: {value!r}")
        if "\n" in value:
            raise PlanError(f"{where}: env {name} spans lines")
        lines.append(f"{name}={value}")
    return "\n".join(lines)


def ordered_jobs(jobs, path):
    """The job ids in an order their needs allow, the file's order among the ready ones."""
    done, order = set(), []
    while len(order) < len(jobs):
        ready = [job for job, body in jobs.items() if job not in done and all(
            need in done for need in as_list(body.get("needs")))]
        if not ready:
            raise PlanError(f"{path}: the needs of {sorted(set(jobs) - done)} form a cycle or name no job")
        order.append(ready[0])
        done.add(ready[0])
    return order


def as_list(value):
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def plan(paths):
    out = ["plan_jobs=() plan_steps=()", "declare -gA job_image=() job_runs_on=() job_env=()",
           "declare -gA step_job=() step_name=() step_kind=() step_text=() step_with=() step_env=()"]
    number = 0
    for path in paths:
        workflow = YAML(typ="safe").load(open(path, encoding="utf-8"))
        name = os.path.basename(path)
        workflow_env = env_lines(workflow.get("env"), name)
        for job_id in ordered_jobs(workflow["jobs"], name):
            body = workflow["jobs"][job_id]
            key = f"{name}:{job_id}"
            for refused in REFUSED_JOB_KEYS:
                if refused in body:
                    raise PlanError(f"{key}: `{refused}:` is not run by this test (steps.py)")
            container = body.get("container")
            image = container if isinstance(container, str) else (container or {}).get("image", "")
            out.append(f"plan_jobs+=({shlex.quote(key)})")
            out.append(f"job_image[{shlex.quote(key)}]={shlex.quote(image or '')}")
            out.append(f"job_runs_on[{shlex.quote(key)}]={shlex.quote(str(body.get('runs-on', '')))}")
            env = "\n".join(filter(None, [workflow_env, env_lines(body.get("env"), key)]))
            out.append(f"job_env[{shlex.quote(key)}]={shlex.quote(env)}")
            for index, step in enumerate(body.get("steps", []), 1):
                where = f"{key}, step {index} ({step.get('name', '')})"
                for refused in REFUSED_STEP_KEYS:
                    if refused in step:
                        raise PlanError(f"{where}: `{refused}:` is not run by this test (steps.py)")
                if ("run" in step) == ("uses" in step):
                    raise PlanError(f"{where}: a step needs one of run: and uses:")
                number += 1
                if "run" in step:
                    kind, text = "run", str(step["run"])
                    if EXPRESSION_RE.search(text):
                        raise PlanError(f"{where}: an expression inside run: (give it through env:)")
                else:
                    kind, text = "uses", str(step["uses"])
                for option, value in (step.get("with") or {}).items():
                    value = str(value)
                    if EXPRESSION_RE.search(value):
                        raise PlanError(f"{where}: with: {option} holds an expression")
                    out.append(f"step_with[{number}:{shlex.quote(str(option))}]={shlex.quote(value)}")
                out.append(f"plan_steps+=({number})")
                for field, value in (("job", key), ("name", str(step.get("name", text.splitlines()[0]))),
                                     ("kind", kind), ("text", text),
                                     ("env", env_lines(step.get("env"), where))):
                    out.append(f"step_{field}[{number}]={shlex.quote(value)}")
    return "\n".join(out)


def main():
    try:
        print(plan(sys.argv[1:]))
    except PlanError as error:
        print(f"steps.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
