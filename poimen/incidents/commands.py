"""Commands that change state, as an incident's action: what an operator types to fix something (``kubectl patch``,
``helm upgrade``, ``ALTER …``, a router's ``set protocols …``), and what such a command prints about the object it
changed. A command that only looks (``kubectl get``, ``SELECT``, ``tune2fs -l``, ``nft list``) is none of them.
``poimen.incidents.cues`` re-exports both, so every cue is found in one place."""

from __future__ import annotations

import re

COMMAND = re.compile(
    r"\bkubectl\b.*?\b(?:patch|scale|set|apply|edit|delete|drain|cordon|uncordon|replace|annotate|label|"
    r"rollout\s+(?:undo|restart))\b|\basadmin\s+(?:set|create-|delete-|deploy|undeploy|restart-)|\bhelm\b(?:\s+-{1,2}[\w-]+(?:[= ](?!-)\S+)?)*\s+(?:upgrade|rollback|install|uninstall)\b|\bterraform\s+apply\b"
    r"|\bALTER\s+(?:TABLE|SYSTEM|DATABASE|USER|ROLE|INDEX|SEQUENCE|TYPE|SCHEMA|TABLESPACE|EXTENSION|PUBLICATION|SUBSCRIPTION"
    r"|(?:MATERIALIZED\s+)?VIEW)\b|\bUPDATE\s+\w+\s+SET\b|\bSET\s+GLOBAL\b"
    r"|\bCREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:CONCURRENTLY\s+)?\w|\bREFRESH\s+MATERIALIZED\s+VIEW\b"
    r"|\b(?:ANALYZE|VACUUM(?:\s+FULL)?|REINDEX(?:\s+(?:TABLE|INDEX|DATABASE))?)\s+[a-z_]\w*(?:[_.\d][\w.]*|\s*;)"
    r"|\bsystemctl\s+(?:restart|reload|stop|start|enable|disable)\b|\bservice\s+\S+\s+restart\b"
    r"|\b(?:apt-get|apt|yum|dnf|apk|zypper|brew)\s+(?:-\S+\s+)*(?:install|upgrade|remove|add|del)\b|\bpip3?\s+install\b"
    # (a commit with its message says what it changes: "git commit -am \"ingress-public: allow update on
    # ingresses/status again\""; Argo CD's sync and rollback change what a cluster runs; bench/incidents46)
    r"|\bgit\s+commit\b.*?\s-[a-z]*m[ =]?[\"']\S|\bargocd\s+app\s+(?:sync|rollback|set|patch|delete)\b"
    r"|\bsystemctl\s+(?:edit|daemon-reload|mask|unmask)\b|\bgit\s+revert\b|\bsysctl\s+(?:-[wp]|--system)\b|(?:>>?|\btee\s+(?:-a\s+)?)\s*/etc/|\bsed\s+-i\b"
    r"|\brm\s+(?:-\S+\s+)*/etc/|\bch(?:mod|own|grp)\s|\bsystemctl\s+(?:revert|kill)\b|\bjournalctl\s+--vacuum-"
    r"|\b(?:semanage|restorecon|setsebool|lvextend|resize2fs|xfs_growfs|update-ca-certificates)\b|\bmount\s+-o\s+remount"
    r"|\bcertbot\s+(?:renew|certonly)\b|\bkeytool\s+-import|\brndc\s+(?:reload|sign|loadkeys|flush)\b|[\w=-]:(?:write-attribute|undefine-attribute|flush-[\w-]+|add|remove)\(|^\s*:reload\b"
    r"|\bceph\b.*\s(?:set|unset|reweight|on|enable)\b|\biptables\s+-[AIDR]\b|\bdocker\s+(?:restart|rm|run)\b|\bredis-cli\b.*\bconfig\s+set\b"
    r"|\baws\s+\S+\s+(?:update|modify|put|create|delete|attach|detach|associate|disassociate|set|enable|disable|"
    r"add|remove|register|deregister|start(?!-session)|stop|reboot|terminate|restore|promote|failover|authorize|"
    r"revoke)-|\bansible-playbook\b"
    r"|\bpg_(?:drop|terminate|cancel|reload|create|promote)_\w+\s*\(|\bDROP\s+(?:TABLE|INDEX|DATABASE|ROLE|USER|SCHEMA|"
    r"SUBSCRIPTION|PUBLICATION)\b|\b(?-i:VACUUM|REINDEX)\b|\bCREATE\s+(?:UNIQUE\s+)?INDEX\b|\b(?:GRANT|REVOKE)\s+\w+"
    r"|\bSTOP\s+(?:SLAVE|REPLICA)\b|\bSTART\s+(?:SLAVE|REPLICA)\b|\bSET\s+(?:PERSIST|SESSION)\b"
    # MySQL's and MariaDB's FLUSH, upper case as the statement is written ("Ran FLUSH SSL on db-loan-01"; incidents42)
    r"|\b(?-i:FLUSH)\s+(?-i:SSL|PRIVILEGES|TABLES|HOSTS|(?:BINARY |ERROR |SLOW |ENGINE |RELAY )?LOGS|STATUS)\b"
    r"|\bgcloud\s+.*\b(?:update|set|create|delete|resize)\b|\baz\s+.*\b(?:update|set|create|delete|restart)\b"
    r"|^\W*[a-z][\w-]*(?:\s+-{1,2}[\w-]+(?:[= ]\S+)?)*\s+config\s+set\b"
    # nftables' rule edits, tune2fs' feature and option changes (not its -l listing), and a router's configuration
    # mode (VyOS, Junos: "set protocols bgp neighbor … maximum-prefix 5000"; bench/incidents38)
    r"|\bnft\s+(?:-\w+\s+)*(?:add|insert|delete|replace|flush|create)\s+(?:rule|chain|table|set|element|map)\b"
    r"|\btune2fs\s+(?:-\w+\s+)*-[OocCeEimMrT]\s|(?:^|[#>]\s*)(?:set|delete)\s+(?:protocols|interfaces|system|firewall|policy"
    r"|policy-options|service|nat|high-availability|vpn|routing-options|security|vrf|load-balancing|qos)\s+\S", re.I)
# what a state-changing command printed about the object it changed: kubectl's "networkpolicy.networking.k8s.io/
# allow-x created" (its "unchanged" siblings changed nothing), names what the fix was where the command line only
# names a file
CHANGED_OBJECT = re.compile(r"^[a-z][\w.-]*/[\w.-]+\s+(?:created|configured|patched|deleted|scaled|restarted|"
                            r"rolled back|cordoned|drained|uncordoned|annotated|labeled|serverside-applied)\s*$"
                            # and terraform's "aws_eks_node_group.workers_v3_euw1a: Creation complete after 2m47s [id=…]"
                            r"|^[a-z][\w-]*\.[\w.\[\]\"-]+: (?:Creation|Modifications|Destruction) complete after\b")
# A command told as what a thing does, not typed ("58.sql does CREATE INDEX CONCURRENTLY and …", "the nightly job runs
# VACUUM FULL on events"; bench/incidents47): the mechanism a failure came from, not a change anyone made. The verb
# right before the command says so; who does it (``roles._agentive``: "I ran ALTER TABLE …" is a change) decides, and
# what a thing now does is a change made ("The job now runs REFRESH MATERIALIZED VIEW CONCURRENTLY …").
_TOLD = re.compile(r"(?<!\bnow )\b(?:does|did|runs|ran|issues|issued|executes|executed|performs|performed|contains)\s+"
                   r"(?:an?\s+|its\s+|the\s+)?$", re.I)


def told_command(text: str, agentive) -> bool:
    """Whether ``text`` names state-changing commands (``COMMAND``) only as what a thing does, each after a verb of
    doing whose subject ``agentive(text, verb_at)`` says is no one."""
    found = list(COMMAND.finditer(text))
    told = [m for c in found if (m := _TOLD.search(text, 0, c.start()))]
    return bool(found) and len(told) == len(found) and not any(agentive(text, m.start()) for m in told)
