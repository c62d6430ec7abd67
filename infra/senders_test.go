package infra

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// policyStatement is one statement of a queue or topic policy, rendered
// for comparison (lists sorted, references as ${id} and ${id.Arn}).
type policyStatement struct {
	Sid, Effect, Principal, Action, Condition string
}

func (p policyStatement) String() string {
	return fmt.Sprintf("{%s %s %s %s %s}", p.Sid, p.Effect, p.Principal, p.Action, p.Condition)
}

// renderPrincipal renders "*", {"AWS": "*"} and {"Service": "x"}.
func renderPrincipal(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return render(v)
	}
	var parts []string
	for k, x := range m {
		parts = append(parts, k+":"+render(x))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// resourcePolicies returns the statements of every policy of type typ
// (AWS::SQS::QueuePolicy with list key "Queues", AWS::SNS::TopicPolicy with
// "Topics") by the logical id of the queue or topic, failing the test when
// a statement is about another resource than its policy's.
func resourcePolicies(t *testing.T, s *synthesized, typ, listKey, arnSuffix string) map[string][]policyStatement {
	t.Helper()
	out := map[string][]policyStatement{}
	for id, r := range s.resourcesOf(typ) {
		p := props(r)
		targets := strs(p[listKey])
		if len(targets) != 1 {
			t.Fatalf("%s %s is attached to %v, want one", typ, id, targets)
		}
		target := strings.Trim(targets[0], "${}")
		for _, raw := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			st := raw.(map[string]any)
			for _, k := range []string{"NotAction", "NotResource", "NotPrincipal"} {
				if _, ok := st[k]; ok {
					t.Errorf("%s %s: statement uses %s: %v", typ, id, k, st)
				}
			}
			if got, want := render(st["Resource"]), "${"+target+arnSuffix+"}"; got != want {
				t.Errorf("%s %s: statement on %s, want %s", typ, id, got, want)
			}
			actions := strs(st["Action"])
			sort.Strings(actions)
			ps := policyStatement{Sid: render(st["Sid"]), Effect: render(st["Effect"]), Principal: renderPrincipal(st["Principal"]),
				Action: strings.Join(actions, ",")}
			if c, ok := st["Condition"]; ok {
				ps.Condition = renderCondition(c)
			}
			out[target] = append(out[target], ps)
		}
	}
	for id := range out {
		slices.SortFunc(out[id], func(a, b policyStatement) int { return strings.Compare(a.String(), b.String()) })
	}
	return out
}

// anyOf renders a condition's list of values as renderCondition does.
func anyOf(values ...string) string {
	v := slices.Clone(values)
	sort.Strings(v)
	return strings.Join(v, " | ")
}

// TestQueueAndTopicPoliciesExactly lists every statement of every queue's
// and topic's policy. A queue or topic takes messages only from the stack's
// roles that send to it and from the AWS services that deliver for the
// stack's own resources: an explicit Deny (Sid OnlyStackSenders) covers
// every other principal of the account, whose identity policies would
// otherwise suffice.
func TestQueueAndTopicPoliciesExactly(t *testing.T) {
	full, dev := synth(t)
	for _, s := range []*synthesized{full, dev} {
		t.Run(s.stack.Spec.Stage, func(t *testing.T) {
			st := s.stack
			arn := func(logical string) string { return "${" + logical + ".Arn}" }
			role := func(h string) string { return arn(s.logicalID(t, st.Functions[h].Role)) }
			schedulerRole := arn(s.logicalID(t, st.SchedulerRole))
			decision, work, ingest := s.logicalID(t, st.Queues.Decision), s.logicalID(t, st.Queues.Work), s.logicalID(t, st.Queues.SignalIngest)
			decisionDLQ, workDLQ, ingestDLQ := s.logicalID(t, st.Queues.DecisionDLQ), s.logicalID(t, st.Queues.WorkDLQ), s.logicalID(t, st.Queues.SignalIngestDLQ)
			eventsTopic, signalsTopic := s.logicalID(t, st.EventsTopic), s.logicalID(t, st.SignalsTopic)

			tlsQueue := policyStatement{Effect: "Deny", Principal: "AWS:*", Action: "sqs:*", Condition: "Bool:aws:SecureTransport=false"}
			tlsTopic := policyStatement{Sid: "AllowPublishThroughSSLOnly", Effect: "Deny", Principal: "*", Action: "sns:Publish",
				Condition: "Bool:aws:SecureTransport=false"}
			only := func(action string, roles []string, sources []string) policyStatement {
				var c []string
				if len(roles) > 0 {
					c = append(c, "ArnNotEquals:aws:PrincipalArn="+anyOf(roles...))
				}
				if len(sources) > 0 {
					c = append(c, "ArnNotEquals:aws:SourceArn="+anyOf(sources...))
				}
				return policyStatement{Sid: SendersSid, Effect: "Deny", Principal: "*", Action: action, Condition: strings.Join(c, ";")}
			}
			bucket := "arn:${AWS::Partition}:s3:::" + st.Spec.Bucket.Name + "-${AWS::AccountId}"
			ingestSources := []string{bucket, "${" + signalsTopic + "}"}
			ingestAllows := []policyStatement{
				{Effect: "Allow", Principal: "Service:sns.amazonaws.com", Action: "sqs:SendMessage",
					Condition: "ArnEquals:aws:SourceArn=${" + signalsTopic + "}"},
				{Sid: "SignalsBucketNotifications", Effect: "Allow", Principal: "Service:s3.amazonaws.com", Action: "sqs:SendMessage",
					Condition: "ArnEquals:aws:SourceArn=" + bucket + ";StringEquals:aws:SourceAccount=${AWS::AccountId}"},
			}
			var workSources []string
			var workAllows []policyStatement
			if s == full {
				attached := "arn:${AWS::Partition}:s3:::" + testAttached[0]
				ingestSources = append(ingestSources, attached)
				ingestAllows = append(ingestAllows, policyStatement{Effect: "Allow", Principal: "Service:s3.amazonaws.com",
					Action: "sqs:GetQueueAttributes,sqs:GetQueueUrl,sqs:SendMessage", Condition: "ArnLike:aws:SourceArn=" + attached})
				for _, r := range []string{s.logicalID(t, st.Jobs.ECSRule), s.logicalID(t, st.Jobs.BatchRule)} {
					workSources = append(workSources, arn(r))
					workAllows = append(workAllows, policyStatement{Effect: "Allow", Principal: "Service:events.amazonaws.com",
						Action: "sqs:GetQueueAttributes,sqs:GetQueueUrl,sqs:SendMessage", Condition: "ArnEquals:aws:SourceArn=" + arn(r)})
				}
			}
			want := map[string][]policyStatement{
				decision: {tlsQueue, only("sqs:SendMessage", []string{role(HandlerRouter), role(HandlerWorker), schedulerRole}, nil)},
				work: slices.Concat([]policyStatement{tlsQueue, only("sqs:SendMessage",
					[]string{role(HandlerAPI), role(HandlerDecider), role(HandlerWorker), role(HandlerRouter), schedulerRole}, workSources)}, workAllows),
				ingest:      slices.Concat([]policyStatement{tlsQueue, only("sqs:SendMessage", nil, ingestSources)}, ingestAllows),
				decisionDLQ: {tlsQueue, only("sqs:SendMessage", nil, []string{arn(decision)})},
				workDLQ:     {tlsQueue, only("sqs:SendMessage", nil, []string{arn(work)})},
				ingestDLQ:   {tlsQueue, only("sqs:SendMessage", []string{role(HandlerSignals)}, []string{arn(ingest)})},
				eventsTopic: {tlsTopic, only("sns:Publish", []string{role(HandlerRouter)}, nil)},
				// The signals topic is the entrance for callers' signals.
				signalsTopic: {tlsTopic},
			}
			got := resourcePolicies(t, s, "AWS::SQS::QueuePolicy", "Queues", ".Arn")
			for k, v := range resourcePolicies(t, s, "AWS::SNS::TopicPolicy", "Topics", "") {
				got[k] = v
			}
			for k := range want {
				slices.SortFunc(want[k], func(a, b policyStatement) int { return strings.Compare(a.String(), b.String()) })
			}
			for k, w := range want {
				if !slices.Equal(got[k], w) {
					t.Errorf("policy of %s:\n got %v\nwant %v", k, got[k], w)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("unexpected policy of %s: %v", k, got[k])
				}
			}
		})
	}
}

// TestEverySenderIsAdmitted checks, from the other side, that the policies
// admit every sender the template has: each role granted sqs:SendMessage
// or sns:Publish on a stack queue or topic, each schedule's role, and each
// service a queue policy allows. A sender added without its place in the
// policy fails here (it would be denied in AWS).
func TestEverySenderIsAdmitted(t *testing.T) {
	full, dev := synth(t)
	for _, s := range []*synthesized{full, dev, synthECSPublic(t)} {
		t.Run(s.stack.Spec.Stage, func(t *testing.T) {
			// The OnlyStackSenders condition of every queue and topic, by
			// the ARN rendering the grants use.
			denies := map[string]string{}
			targets := map[string]string{"AWS::SQS::QueuePolicy": "Queues", "AWS::SNS::TopicPolicy": "Topics"}
			for typ, key := range targets {
				for _, r := range s.resourcesOf(typ) {
					target := strings.Trim(strs(props(r)[key])[0], "${}")
					ref := "${" + target + ".Arn}"
					if typ == "AWS::SNS::TopicPolicy" {
						ref = "${" + target + "}"
					}
					for _, raw := range props(r)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
						st := raw.(map[string]any)
						if st["Sid"] == SendersSid {
							denies[ref] = renderCondition(st["Condition"])
						}
					}
				}
			}
			restricted := []string{"${" + s.logicalID(t, s.stack.EventsTopic) + "}"}
			for id := range s.resourcesOf("AWS::SQS::Queue") {
				restricted = append(restricted, "${"+id+".Arn}")
			}
			for _, r := range restricted {
				if _, ok := denies[r]; !ok {
					t.Errorf("%s has no %s statement: any principal of the account may send to it", r, SendersSid)
				}
			}
			admits := func(resource, key, value string) bool {
				c, ok := denies[resource]
				if !ok {
					return true // no restriction (the signals topic)
				}
				for _, part := range strings.Split(c, ";") {
					if k, list, _ := strings.Cut(part, "="); k == "ArnNotEquals:"+key && slices.Contains(strings.Split(list, " | "), value) {
						return true
					}
				}
				return false
			}
			senders := 0
			for roleID, gs := range roleGrants(t, s) {
				for _, g := range gs {
					if g.Action != "sqs:SendMessage" && g.Action != "sns:Publish" {
						continue
					}
					if _, ours := denies[g.Resource]; !ours && !strings.HasPrefix(g.Resource, "${") {
						continue // a callback queue or topic of the account
					}
					senders++
					if !admits(g.Resource, "aws:PrincipalArn", "${"+roleID+".Arn}") {
						t.Errorf("role %s may %s on %s, but that policy denies it", roleID, g.Action, g.Resource)
					}
				}
			}
			for id, r := range s.resourcesOf("AWS::Scheduler::Schedule") {
				target := props(r)["Target"].(map[string]any)
				senders++
				if !admits(render(target["Arn"]), "aws:PrincipalArn", render(target["RoleArn"])) {
					t.Errorf("schedule %s delivers to %s as %s, which its policy denies", id, render(target["Arn"]), render(target["RoleArn"]))
				}
			}
			for _, r := range s.resourcesOf("AWS::SQS::QueuePolicy") {
				queue := "${" + strings.Trim(strs(props(r)["Queues"])[0], "${}") + ".Arn}"
				for _, raw := range props(r)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
					st := raw.(map[string]any)
					if st["Effect"] != "Allow" {
						continue
					}
					senders++
					cond, _ := st["Condition"].(map[string]any)
					var source string
					for _, op := range []string{"ArnEquals", "ArnLike"} {
						if m, ok := cond[op].(map[string]any); ok {
							source = render(m["aws:SourceArn"])
						}
					}
					if source == "" || !admits(queue, "aws:SourceArn", source) {
						t.Errorf("%s allows %s for source %q, which its Deny does not admit", queue, renderPrincipal(st["Principal"]), source)
					}
				}
			}
			if senders < 10 {
				t.Errorf("found %d senders: the walk is broken", senders)
			}
		})
	}
}

// TestQueuesAcceptNoForeignRedrive checks every queue's redrive allow
// policy: a queue of the account that names a stack queue as its
// dead-letter queue would move messages into it without SendMessage.
func TestQueuesAcceptNoForeignRedrive(t *testing.T) {
	full, dev := synth(t)
	for _, s := range []*synthesized{full, dev} {
		spec := s.stack.Spec.Queues
		source := map[string]string{spec.DecisionDLQ.Name: spec.Decision.Name, spec.WorkDLQ.Name: spec.Work.Name,
			spec.SignalIngestDLQ.Name: spec.SignalIngest.Name}
		for id, r := range s.resourcesOf("AWS::SQS::Queue") {
			p := props(r)
			name := render(p["QueueName"])
			want := "map[redrivePermission:denyAll]"
			if src, ok := source[name]; ok {
				want = "map[redrivePermission:byQueue sourceQueueArns:arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:" + src + "]"
			}
			rap, _ := p["RedriveAllowPolicy"].(map[string]any)
			got := fmt.Sprintf("map[redrivePermission:%s", render(rap["redrivePermission"]))
			if arns, ok := rap["sourceQueueArns"]; ok {
				got += " sourceQueueArns:" + render(arns)
			}
			got += "]"
			if got != want {
				t.Errorf("%s %s (%s): redrive allow policy %s, want %s", s.stack.Spec.Stage, id, name, got, want)
			}
		}
	}
}
