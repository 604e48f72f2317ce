#!/usr/bin/env python3
"""Writes dev.csv and check.csv: situations of the Lin family's agents with the label whether
the agent should change the plan, by the rules below (see ../README.md). Run from anywhere;
the seeded shuffle makes the same split every time."""
import csv, os, random
HERE = os.path.dirname(os.path.abspath(__file__))
H="Lin family's house/"; M="The Willows Market and Pharmacy/"; C="Oak Hill College/"
# (id, agent, time, place, plan lines, tags, obligation)
plans = [
 ("J1","John Lin","10:00 am",M+"Counter",["10:00 am: serve customers at the counter","10:15 am: fill prescriptions","10:30 am: restock the cough syrup shelf","10:45 am: help an elderly customer choose vitamins","11:00 am: serve customers and fill prescriptions"],{"social"},True),
 ("J2","John Lin","11:45 am",M+"Counter",["11:45 am: finish the last prescription of the morning","12:00 pm: eat lunch at Hobbs Cafe"],{"eat"},True),
 ("J3","John Lin","02:00 pm",M+"Storage room",["02:00 pm: unpack the new deliveries","02:15 pm: check the delivery invoices","02:30 pm: carry boxes to the shelves","02:45 pm: restock the cold medicine","03:00 pm: unpack deliveries and restock the shelf"],set(),True),
 ("J4","John Lin","05:45 pm",M+"Counter",["05:45 pm: count the till and lock the shop","06:00 pm: cook dinner and eat with the family"],{"eat","social"},False),
 ("J5","John Lin","08:00 pm",H+"Living room",["08:00 pm: read the newspaper in the living room","08:15 pm: read the sports pages","08:30 pm: do the crossword","08:45 pm: read the local news","09:00 pm: watch the evening news on television"],{"fun"},False),
 ("J6","John Lin","09:45 pm",H+"Bathroom",["09:45 pm: brush his teeth and wash his face","10:00 pm: go to bed"],{"sleep"},False),
 ("J7","John Lin","07:00 am",H+"Kitchen",["07:00 am: make breakfast for the family","07:15 am: eat breakfast with Eddy","07:30 am: walk to The Willows Market and Pharmacy","07:45 am: open the shop","08:00 am: serve customers and fill prescriptions"],{"eat","social"},True),
 ("J8","John Lin","03:00 pm",M+"Counter",["03:00 pm: serve customers at the counter","03:15 pm: answer a phone call from the doctor's office","03:30 pm: fill prescriptions","03:45 pm: serve customers","04:00 pm: serve customers and fill prescriptions"],{"social"},True),
 ("E1","Eddy Lin","09:00 am",C+"Classroom",["09:00 am: take notes in the music theory lecture","09:15 am: analyse a Bach chorale with the class","09:30 am: take notes on voice leading","09:45 am: ask the teacher a question","10:00 am: attend the music theory lecture"],set(),True),
 ("E2","Eddy Lin","12:15 pm",C+"Library",["12:15 pm: finish the harmony exercise","12:30 pm: grab lunch at Hobbs Cafe"],{"eat"},True),
 ("E3","Eddy Lin","02:00 pm",H+"Eddy Lin's bedroom",["02:00 pm: work on his composition","02:15 pm: write the second theme","02:30 pm: play the new bars on the keyboard","02:45 pm: revise the harmony","03:00 pm: work on his composition in his bedroom"],{"fun"},False),
 ("E4","Eddy Lin","05:00 pm","Johnson Park",["05:00 pm: walk around Johnson Park","05:15 pm: walk along the pond","05:30 pm: sit on a bench and listen to the birds","05:45 pm: walk home","06:00 pm: have dinner with the family"],{"health","fun","eat","social"},False),
 ("E5","Eddy Lin","08:00 pm",H+"Living room",["08:00 pm: practise the piano","08:15 pm: play scales","08:30 pm: play through his composition","08:45 pm: revise the ending","09:00 pm: practise the piano and revise the composition"],{"fun"},False),
 ("E6","Eddy Lin","11:00 pm",H+"Eddy Lin's bedroom",["11:00 pm: revise the composition","11:15 pm: put away his music","11:30 pm: go to sleep"],{"sleep"},False),
 ("E7","Eddy Lin","06:00 pm",H+"Kitchen",["06:00 pm: set the table","06:15 pm: have dinner with the family","06:30 pm: tell his father about his day","06:45 pm: wash the dishes","07:00 pm: have dinner with the family"],{"eat","social"},False),
]
# E4's next-hour line (dinner at 6) is beyond this hour; eat counts since dinner is within the window shown.
feelings = [
 ("neutral",""),("happy",""),("sad",""),("angry",""),("surprised",""),
 ("neutral","fullness=3"),("neutral","energy=3"),("happy","social=2"),
 ("neutral","fullness=1"),("sad","fullness=0"),("neutral","energy=0"),("neutral","energy=1"),
 ("neutral","social=0"),("neutral","fun=0"),("neutral","health=1"),("happy","fullness=0 energy=3"),
]
remedy={"fullness":"eat","energy":"sleep","health":"health","social":"social","fun":"fun"}
rows=[]
for pid,agent,time,place,lines,tags,oblig in plans:
    for emo,needs in feelings:
        urgent=[remedy[k] for k,v in (p.split("=") for p in needs.split()) if int(v)<=1]
        skip=False; yes=False
        for r in urgent:
            if r in tags: continue
            if r in ("social","fun") and oblig: continue
            if r=="health" and pid=="J5": skip=True
            if r=="social" and pid in ("E1","E3"): skip=True
            yes=True
        if skip: continue
        rows.append([pid,agent,time,emo,needs,place,"; ".join(lines),"yes" if yes else "no"])
random.seed(7)
random.shuffle(rows)
n=len(rows); k=n*2//3
for name,part in (("dev",rows[:k]),("check",rows[k:])):
    part.sort(key=lambda r:(r[0],r[3],r[4]))
    with open(os.path.join(HERE, f"{name}.csv"),"w",newline="") as f:
        w=csv.writer(f); w.writerow(["agent","time","emotion","needs","place","plan","change"])
        for r in part: w.writerow(r[1:])
    print(name,len(part),sum(r[-1]=="yes" for r in part))
